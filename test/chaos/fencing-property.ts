/**
 * Fencing, by property: random interleavings of claim / heartbeat / complete / fail /
 * cancel / cancel-ack / recover / lease expiry from three workers over two jobs, against
 * the real database (fast-check generates and shrinks them). Workers keep every lease they
 * ever held and keep writing with it, so stale writes are attempted all the time.
 *
 * Checked after every command: a write is accepted only if its lease (worker id + attempt)
 * is the job's current one and the job is running; a completed job never moves back;
 * attempt_count never decreases and never passes max_attempts.
 */
import fc from 'fast-check';
import type pg from 'pg';
import * as ops from '../../lib/queue/ops';

const WORKERS = ['host-a:1:aaaaaa', 'host-b:2:bbbbbb', 'host-c:3:cccccc'];
const LEASE_MS = 60_000;

type Cmd =
  | { kind: 'claim' | 'complete' | 'fail' | 'cancelAck'; w: number; j: number }
  | { kind: 'heartbeat'; w: number }
  | { kind: 'expire' | 'cancel'; j: number }
  | { kind: 'recover' };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), w: fc.nat(2), j: fc.nat(1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('complete' as const), w: fc.nat(2), j: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fail' as const), w: fc.nat(2), j: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancelAck' as const), w: fc.nat(2), j: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), w: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('expire' as const), j: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), j: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('recover' as const) }) },
);

export interface FencingResult {
  runs: number;
  commands: number;
  jobs: number;
  completed: number;
  claims: number;
  staleAccepted: number;
  completedMovedBack: number;
  failures: number;
  counterexample?: string;
}

interface Row {
  status: string;
  worker_id: string | null;
  attempt_count: number;
  max_attempts: number;
}

export async function fencingProperty(pool: pg.Pool, o: { runs: number; seed?: number }): Promise<FencingResult> {
  const out: FencingResult = { runs: 0, commands: 0, jobs: 0, completed: 0, claims: 0, staleAccepted: 0, completedMovedBack: 0, failures: 0 };
  const read = async (ids: string[]) => {
    const { rows } = await pool.query(`SELECT job_id, status, worker_id, attempt_count, max_attempts FROM jobs WHERE job_id = ANY($1::bigint[]) ORDER BY job_id`, [ids]);
    return new Map<string, Row>(rows.map((r) => [String(r.job_id), r]));
  };
  const current = (r: Row, w: string, attempt: number) => r.status === 'running' && r.worker_id === w && r.attempt_count === attempt;

  const property = fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 14 }), async (cmds) => {
    out.runs++;
    const made = await ops.jobEnqueue(pool, [
      { type: 'demo.noop', queue: 'fencing', maxAttempts: 4 },
      { type: 'demo.noop', queue: 'fencing', maxAttempts: 4 },
    ]);
    const ids = made.map((m) => m.id);
    out.jobs += ids.length;
    // Every lease each worker ever held, per job (stale ones included).
    const held = WORKERS.map(() => new Map<string, number[]>());
    const everCompleted = new Set<string>();
    let lastAttempts = new Map(ids.map((id) => [id, 0]));
    // Commands run one at a time, so the state after one is the state before the next.
    let state = await read(ids);

    for (const c of cmds) {
      out.commands++;
      const before = new Map(state);
      let stale = 0;
      switch (c.kind) {
        case 'claim': {
          const id = ids[c.j]!;
          const got = await ops.jobClaim(pool, { ids: [id], workerId: WORKERS[c.w]!, leaseMs: LEASE_MS });
          for (const g of got) {
            const list = held[c.w]!.get(id) ?? [];
            held[c.w]!.set(id, [...list, g.attemptCount]);
          }
          break;
        }
        case 'heartbeat': {
          const w = WORKERS[c.w]!;
          const leases = [...held[c.w]!].flatMap(([jobId, attempts]) => attempts.map((attempt) => ({ jobId, attempt })));
          const { renewed } = await ops.jobHeartbeat(pool, { workerId: w, leaseMs: LEASE_MS, leases });
          // A renewal is legitimate only if one of the leases sent for that job is its current one.
          for (const id of renewed.keys()) {
            if (!(held[c.w]!.get(id) ?? []).some((a) => current(before.get(id)!, w, a))) stale++;
          }
          break;
        }
        case 'complete':
        case 'fail':
        case 'cancelAck': {
          const id = ids[c.j]!;
          const w = WORKERS[c.w]!;
          for (const attempt of held[c.w]!.get(id) ?? []) {
            const lease = { jobId: id, attempt };
            const accepted =
              c.kind === 'complete'
                ? (await ops.jobComplete(pool, { workerId: w, items: [lease] })).has(id)
                : c.kind === 'fail'
                  ? (await ops.jobFail(pool, { workerId: w, items: [{ ...lease, error: 'boom', backoffMs: 0 }] })).has(id)
                  : (await ops.jobCancelAck(pool, { workerId: w, leases: [lease] })).has(id);
            const pre = before.get(id)!;
            if (accepted && !current(pre, w, attempt)) stale++;
            if (accepted) before.set(id, { ...pre, status: 'done' }); // the next write in this loop sees it changed
          }
          break;
        }
        case 'expire':
          await pool.query(`UPDATE jobs SET lease_expires_at = now() - interval '1 ms' WHERE job_id = $1 AND status = 'running'`, [ids[c.j]]);
          break;
        case 'cancel':
          await ops.jobCancel(pool, { ids: [ids[c.j]!] });
          break;
        case 'recover':
          await ops.jobRecover(pool, { ids });
          break;
      }
      out.staleAccepted += stale;
      const after = await read(ids);
      state = after;
      for (const [id, r] of after) {
        if (everCompleted.has(id) && r.status !== 'completed') out.completedMovedBack++;
        if (r.status === 'completed') everCompleted.add(id);
        if (r.attempt_count < lastAttempts.get(id)! || r.attempt_count > r.max_attempts) out.failures++;
      }
      lastAttempts = new Map([...after].map(([id, r]) => [id, r.attempt_count]));
      if (stale || out.completedMovedBack || out.failures) return false;
    }
    for (const r of state.values()) {
      out.claims += r.attempt_count;
      if (r.status === 'completed') out.completed++;
    }
    return true;
  });

  const details = await fc.check(property, { numRuns: o.runs, seed: o.seed, endOnFailure: true });
  if (details.failed) {
    out.failures++;
    out.counterexample = JSON.stringify(details.counterexample);
  }
  return out;
}
