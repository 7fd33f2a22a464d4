/**
 * Where a job's result goes: a blob store, not the jobs table (`jobs.result_key` holds
 * only the key). A result is written before the completion that points to it, under a key
 * unique to the attempt; if the completion is refused (the lease was lost), the blob is
 * deleted, so the job never points to a result written by an attempt that lost its lease.
 *
 * The filesystem store is the default (one machine, or a shared volume). Anything with
 * put/get/delete by key — an S3-compatible bucket, say — can implement ResultStore.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface StoredResult {
  body: Buffer;
  contentType: string;
}

export interface ResultStore {
  /** Stores the result of one attempt and returns its key. Durable when it resolves. */
  put(jobId: string, attempt: number, body: Buffer, contentType?: string): Promise<string>;
  get(key: string): Promise<StoredResult | null>;
  delete(key: string): Promise<void>;
  /**
   * Deletes every result stored for a job, pointed to or not (an attempt that crashed after
   * writing its result leaves one nothing points to). Optional: a store that cannot list by
   * job deletes only the key the job pointed to.
   */
  deleteAll?(jobId: string): Promise<void>;
}

/** The results directory: LEASEHOLD_RESULTS_DIR, or <data dir>/results, from the working directory. */
export function resultsDir(cfg: { dataDir: string; resultsDir?: string }): string {
  // A path known only at run time: the build's file tracing must not follow it (it warned that
  // it would trace the whole project).
  return path.resolve(/*turbopackIgnore: true*/ cfg.resultsDir ?? path.join(cfg.dataDir, 'results'));
}

const KEY = /^(\d{1,19})\/(\d{1,9})-([0-9a-f]{12})\.json$/;

export const isResultKey = (key: string) => KEY.test(key);

async function syncDir(dir: string) {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export class FsResultStore implements ResultStore {
  constructor(readonly dir: string) {}

  private file(key: string) {
    if (!KEY.test(key)) throw new Error(`not a result key: ${JSON.stringify(key)}`);
    return path.join(this.dir, key);
  }

  async put(jobId: string, attempt: number, body: Buffer): Promise<string> {
    const key = `${jobId}/${attempt}-${randomBytes(6).toString('hex')}.json`;
    const file = this.file(key);
    const made = await fs.mkdir(path.dirname(file), { recursive: true });
    // Write, flush to disk, then rename: a crash leaves either no file or the whole one.
    const tmp = `${file}.tmp`;
    const fh = await fs.open(tmp, 'w');
    try {
      await fh.writeFile(body);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
    // The rename is durable only once the directory holding it is flushed, and a directory
    // made here only once its own parent is: else a power cut after the completion's commit
    // could leave a completed job pointing to no file.
    const changed = [path.dirname(file)];
    for (let d = path.dirname(file); made; d = path.dirname(d)) {
      changed.push(path.dirname(d));
      if (d === made) break;
    }
    for (const dir of changed) await syncDir(dir);
    return key;
  }

  async get(key: string): Promise<StoredResult | null> {
    if (!KEY.test(key)) return null;
    try {
      return { body: await fs.readFile(this.file(key)), contentType: 'application/json' };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.file(key), { force: true });
  }

  async deleteAll(jobId: string): Promise<void> {
    if (!/^\d{1,19}$/.test(jobId)) throw new Error(`not a job id: ${JSON.stringify(jobId)}`);
    await fs.rm(path.join(this.dir, jobId), { recursive: true, force: true });
  }
}
