/**
 * The jobs a worker process holds claimed ahead (--prefetch) and has not started, written
 * where its supervisor can read them after the process is killed: a claim counts an attempt,
 * and without this a held job whose process died had spent it without running (a job allowed
 * one attempt went to the dead letter unrun). The supervisor releases the ones still held
 * (ops.jobRelease: the attempt given back, recorded `aborted`), before their leases end.
 *
 * The rule that makes the release safe: a held job's start is on file before its handler
 * runs. Lines are appended with a synchronous write, which is in the kernel when it returns
 * and survives a SIGKILL (a host that dies takes the supervisor with it: its jobs are then
 * charged, as before). A lost or unwritten `held` line only means a job charged as before;
 * a `started` line is written before the start, or the job does not start until it is.
 *
 * Lines: `w <worker id>` first (the fence the release needs), then `h id:attempt …` (held) and
 * `s id:attempt …` (started). Past COMPACT_BYTES the file is replaced (rename) by its `w` line
 * and one `h` line of what is still held.
 */
import fs from 'node:fs';
import type { Lease } from '../lib/queue/job';

const COMPACT_BYTES = 256 * 1024;

const key = (l: Lease) => `${l.jobId}:${l.attempt}`;

export class HeldLedger {
  private fd: number;
  private bytes = 0;
  /** What the file says is held and not started, to write again when it is compacted. */
  private readonly pending = new Map<string, Lease>();

  constructor(
    readonly file: string,
    private readonly workerId: string,
  ) {
    this.fd = fs.openSync(file, 'w');
    this.append(`w ${workerId}\n`);
  }

  /** These jobs wait in the buffer, their attempt counted. */
  held(leases: readonly Lease[]) {
    if (!leases.length) return;
    for (const l of leases) this.pending.set(key(l), l);
    this.append(`h ${leases.map(key).join(' ')}\n`);
  }

  /** These jobs left the buffer without starting (lost, cancelled, handed back): the release's fence would refuse them anyway. */
  forget(leases: readonly Lease[]) {
    for (const l of leases) this.pending.delete(key(l));
  }

  /** These jobs start now: written before their handlers run (the ones never said held are left out). */
  starting(leases: readonly Lease[]) {
    const known = leases.filter((l) => this.pending.delete(key(l)));
    if (!known.length) return;
    this.append(`s ${known.map(key).join(' ')}\n`);
    if (this.bytes > COMPACT_BYTES) this.compact();
  }

  close() {
    fs.closeSync(this.fd);
    fs.rmSync(this.file, { force: true });
  }

  private append(line: string) {
    this.bytes += fs.writeSync(this.fd, line);
  }

  /** A new file with what is still held, renamed over the old one: a kill at any step leaves a file that tells the truth. */
  private compact() {
    const next = `${this.file}.next`;
    const fd = fs.openSync(next, 'w');
    const line = `w ${this.workerId}\n${this.pending.size ? `h ${[...this.pending.values()].map(key).join(' ')}\n` : ''}`;
    fs.writeSync(fd, line);
    fs.renameSync(next, this.file);
    fs.closeSync(this.fd);
    this.fd = fd;
    this.bytes = line.length;
  }
}

/** The worker and the leases a ledger file says are held and not started (null: no file, or no worker line). */
export function readHeldLedger(file: string): { workerId: string; leases: Lease[] } | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  let workerId: string | null = null;
  const held = new Map<string, Lease>();
  const lines = text.split('\n');
  // After the last newline: a line cut short as the process died. Left out: a held line so
  // cut is not trusted (its jobs charged, as before), and a started one needs no reading (its
  // handlers had not run: a start waits for its line's write).
  lines.pop();
  for (const line of lines) {
    const [kind, ...pairs] = line.split(' ');
    if (kind === 'w') workerId = pairs.join(' ');
    else for (const pair of pairs) {
      const m = /^(\d{1,19}):(\d{1,9})$/.exec(pair);
      if (!m) continue;
      if (kind === 'h') held.set(pair, { jobId: m[1]!, attempt: Number(m[2]) });
      else if (kind === 's') held.delete(pair);
    }
  }
  return workerId === null ? null : { workerId, leases: [...held.values()] };
}
