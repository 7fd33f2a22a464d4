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

/** Every byte, or a throw: writeSync may write part of a buffer (a disk filling up). */
function writeAll(fd: number, buf: Buffer) {
  for (let at = 0; at < buf.length; ) at += fs.writeSync(fd, buf, at);
}

export class HeldLedger {
  /** The open file; null once a write failed (the ledger is off: see fail). */
  private fd: number | null;
  private bytes = 0;
  /** What the file says is held and not started, to write again when it is compacted. */
  private readonly pending = new Map<string, Lease>();

  /** Null when the file cannot be made (the ledger is off; the process runs as before). */
  static open(file: string, workerId: string, onFail: (err: unknown) => void): HeldLedger | null {
    const ledger = new HeldLedger(file, workerId, onFail);
    return ledger.fd === null ? null : ledger;
  }

  private constructor(
    readonly file: string,
    private readonly workerId: string,
    private readonly onFail: (err: unknown) => void,
  ) {
    try {
      this.fd = fs.openSync(file, 'w', 0o600);
    } catch (err) {
      this.fd = null;
      onFail(err);
      return;
    }
    this.append(`w ${workerId}\n`);
  }

  /** These jobs wait in the buffer, their attempt counted. */
  held(leases: readonly Lease[]) {
    if (!leases.length || this.fd === null) return;
    for (const l of leases) this.pending.set(key(l), l);
    this.append(`h ${leases.map(key).join(' ')}\n`);
  }

  /** These jobs left the buffer without starting (lost, cancelled, handed back): the release's fence would refuse them anyway. */
  forget(leases: readonly Lease[]) {
    for (const l of leases) this.pending.delete(key(l));
  }

  /** These jobs start now: written before their handlers run (the ones never said held are left out). */
  starting(leases: readonly Lease[]) {
    if (this.fd === null) return;
    const known = leases.filter((l) => this.pending.delete(key(l)));
    if (!known.length) return;
    this.append(`s ${known.map(key).join(' ')}\n`);
    // Compacted when the file has grown well past what is held (not at each start once the
    // held set alone is large: that would rewrite it every time).
    if (this.bytes > COMPACT_BYTES && this.bytes > 4 * this.pending.size * 24) this.compact();
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    fs.rmSync(this.file, { force: true });
  }

  /** The whole line, or the ledger is off (fail): a start is never left unwritten behind a short write. */
  private append(line: string) {
    if (this.fd === null) return;
    try {
      const buf = Buffer.from(line);
      writeAll(this.fd, buf);
      this.bytes += buf.length;
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * A write failed (a full disk): the file is emptied — which needs no space — so that it says
   * nothing (no worker line: the supervisor releases nothing, and these jobs are charged as
   * before), and the ledger is off for the rest of the process. If even that fails, the file
   * is removed; the supervisor reads no file as nothing held.
   */
  private fail(err: unknown) {
    const fd = this.fd;
    this.fd = null;
    this.pending.clear();
    try {
      if (fd !== null) fs.ftruncateSync(fd, 0);
    } catch {
      fs.rmSync(this.file, { force: true });
    }
    try {
      if (fd !== null) fs.closeSync(fd);
    } catch {
      // closed or not, the ledger is off
    }
    this.onFail(err);
  }

  /** A new file with what is still held, renamed over the old one: a kill at any step leaves a file that tells the truth. */
  private compact() {
    const next = `${this.file}.next`;
    let fd: number | null = null;
    try {
      fd = fs.openSync(next, 'w', 0o600);
      const buf = Buffer.from(`w ${this.workerId}\n${this.pending.size ? `h ${[...this.pending.values()].map(key).join(' ')}\n` : ''}`);
      writeAll(fd, buf);
      fs.renameSync(next, this.file);
      fs.closeSync(this.fd!);
      this.fd = fd;
      this.bytes = buf.length;
    } catch {
      // Not compacted: the old file still tells the truth; it grows on.
      if (fd !== null) fs.closeSync(fd);
      fs.rmSync(next, { force: true });
    }
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
