/**
 * Fencing, by property: random interleavings of claim / heartbeat / complete / fail /
 * cancel / cancel-ack / recover / lease expiry from three workers over two jobs, against
 * the real database (fast-check generates and shrinks them). Workers keep every lease they
 * ever held and keep writing with it, so stale writes are attempted all the time.
 *
 * Checked after every command: a write is accepted only if its lease (worker id + attempt)
 * is the job's current one and the job is running; a completed job never moves back;
 * attempt_count never decreases and never passes max_attempts. And what the commands that
 * take no lease may do (`modelBroken`): a claim takes only a job that is waiting, or running
 * on an expired lease with attempts left and no cancel asked, and takes every waiting one it
 * is given; the sweep moves every expired lease on, where its attempts and a cancel say, and
 * nothing else; a cancel ends a waiting job and only asks a running one; an ended job (failed,
 * cancelled, completed) stays ended, as no command here requeues.
 */
import fc from 'fast-check';
import type pg from 'pg';
import * as ops from '../../lib/queue/ops';

/** A lane's three workers (each lane its own: lanes run side by side, on jobs of their own). */
const workersOf = (lane: number) => [`host-a:1:aaaaa${lane}`, `host-b:2:bbbbb${lane}`, `host-c:3:ccccc${lane}`];
const LEASE_MS = 60_000;
/**
 * Runs split into this many lanes checked at once, each its own fast-check run on jobs of its
 * own: a run's commands wait for one round trip after another, and lanes overlap those waits
 * (`npm run chaos -- fencing` on a 2-core machine, 10,000 runs: 97 s in one lane, 76 s in four).
 */
const LANES = 4;

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
  /** Claims, sweeps and cancels that did what the model forbids (see modelBroken). */
  modelBroken: number;
  failures: number;
  counterexample?: string;
}

interface Row {
  status: string;
  worker_id: string | null;
  attempt_count: number;
  max_attempts: number;
  /** Running on a lease that has run out (the database clock). */
  expired: boolean;
  cancel_requested: boolean;
}

const ENDED = new Set(['completed', 'failed', 'cancelled']);
const WAITING = new Set(['queued', 'retrying']);
/** What may be claimed: waiting (due at once here: no backoff), or taken over from an expired lease. */
const claimable = (r: Row) => WAITING.has(r.status) || (r.status === 'running' && r.expired && r.attempt_count < r.max_attempts && !r.cancel_requested);
const same = (a: Row, b: Row) => a.status === b.status && a.worker_id === b.worker_id && a.attempt_count === b.attempt_count;

/**
 * Why a claim, sweep or cancel left a job where the model says it cannot be (null: it did
 * not). `claimedBy`: the worker a claim returned the job to, if it did.
 */
function modelBroken(c: Cmd, id: string, target: string | null, pre: Row, post: Row, claimedBy: string | null): string | null {
  if (ENDED.has(pre.status)) return same(pre, post) ? null : `ended job ${id} moved from ${pre.status} to ${post.status}`;
  switch (c.kind) {
    case 'claim': {
      if (id !== target) return null;
      if (claimedBy && !claimable(pre)) return `claimed job ${id} that was ${pre.status}${pre.expired ? ', expired' : ''}, ${pre.attempt_count}/${pre.max_attempts}${pre.cancel_requested ? ', cancel asked' : ''}`;
      if (!claimedBy && WAITING.has(pre.status)) return `did not claim waiting job ${id}`;
      if (claimedBy && !(post.status === 'running' && post.worker_id === claimedBy && post.attempt_count === pre.attempt_count + 1)) return `claim of job ${id} left it ${post.status} by ${post.worker_id} at ${post.attempt_count}`;
      return null;
    }
    case 'recover': {
      if (!(pre.status === 'running' && pre.expired)) return same(pre, post) ? null : `the sweep moved job ${id}, ${pre.status} on a live lease`;
      const want = pre.cancel_requested ? 'cancelled' : pre.attempt_count >= pre.max_attempts ? 'failed' : 'retrying';
      return post.status === want ? null : `the sweep left expired job ${id} ${post.status}, not ${want}`;
    }
    case 'cancel': {
      if (id !== target) return null;
      if (WAITING.has(pre.status)) return post.status === 'cancelled' ? null : `cancel left waiting job ${id} ${post.status}`;
      return same(pre, post) && post.cancel_requested ? null : `cancel of running job ${id} did more than ask (${post.status})`;
    }
    default:
      return null;
  }
}

export async function fencingProperty(pool: pg.Pool, o: { runs: number; seed?: number }): Promise<FencingResult> {
  const lanes = await Promise.all(
    Array.from({ length: LANES }, (_, lane) =>
      checkLane(pool, {
        lane,
        runs: Math.floor(o.runs / LANES) + (lane < o.runs % LANES ? 1 : 0),
        seed: o.seed === undefined ? undefined : o.seed + lane,
      }),
    ),
  );
  const sum = (k: keyof Omit<FencingResult, 'counterexample'>) => lanes.reduce((n, r) => n + r[k], 0);
  const counterexample = lanes.flatMap((r, lane) => (r.counterexample ? [`lane ${lane}: ${r.counterexample}`] : [])).join('; ');
  return {
    runs: sum('runs'),
    commands: sum('commands'),
    jobs: sum('jobs'),
    completed: sum('completed'),
    claims: sum('claims'),
    staleAccepted: sum('staleAccepted'),
    completedMovedBack: sum('completedMovedBack'),
    modelBroken: sum('modelBroken'),
    failures: sum('failures'),
    ...(counterexample ? { counterexample } : {}),
  };
}

async function checkLane(pool: pg.Pool, o: { lane: number; runs: number; seed?: number }): Promise<FencingResult> {
  const WORKERS = workersOf(o.lane);
  const out: FencingResult = { runs: 0, commands: 0, jobs: 0, completed: 0, claims: 0, staleAccepted: 0, completedMovedBack: 0, modelBroken: 0, failures: 0 };
  const read = async (ids: string[]) => {
    const { rows } = await pool.query(
      `SELECT job_id, status, worker_id, attempt_count, max_attempts, coalesce(lease_expires_at <= now(), false) AS expired, cancel_requested_at IS NOT NULL AS cancel_requested
         FROM jobs WHERE job_id = ANY($1::bigint[]) ORDER BY job_id`,
      [ids],
    );
    return new Map<string, Row>(rows.map((r) => [String(r.job_id), r]));
  };
  const current = (r: Row, w: string, attempt: number) => r.status === 'running' && r.worker_id === w && r.attempt_count === attempt;

  const property = fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 14 }), async (cmds) => {
    out.runs++;
    // One job with little room, so that runs often use its attempts up (and try past them).
    const made = await ops.jobEnqueue(pool, [
      { type: 'demo.noop', queue: 'fencing', maxAttempts: 2 },
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
      let claimedBy: string | null = null;
      switch (c.kind) {
        case 'claim': {
          const id = ids[c.j]!;
          const got = await ops.jobClaim(pool, { ids: [id], workerId: WORKERS[c.w]!, leaseMs: LEASE_MS });
          if (got.some((g) => g.id === id)) claimedBy = WORKERS[c.w]!;
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
                  : (await ops.jobCancelAck(pool, { workerId: w, leases: [lease], unstarted: false })).has(id);
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
      const target = 'j' in c ? ids[c.j]! : null;
      let broken: string | null = null;
      for (const [id, r] of after) broken ??= modelBroken(c, id, target, state.get(id)!, r, claimedBy);
      if (broken) {
        out.modelBroken++;
        out.counterexample = broken;
      }
      state = after;
      for (const [id, r] of after) {
        if (everCompleted.has(id) && r.status !== 'completed') out.completedMovedBack++;
        if (r.status === 'completed') everCompleted.add(id);
        if (r.attempt_count < lastAttempts.get(id)! || r.attempt_count > r.max_attempts) out.failures++;
      }
      lastAttempts = new Map([...after].map(([id, r]) => [id, r.attempt_count]));
      if (stale || out.completedMovedBack || out.failures || broken) return false;
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
    out.counterexample = `${out.counterexample ? `${out.counterexample}; ` : ''}${JSON.stringify(details.counterexample)}`;
  }
  return out;
}
