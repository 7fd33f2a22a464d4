/** Reads the marker a fired failpoint leaves in LEASEHOLD_FAILPOINTS_ONCE_DIR (see lib/failpoints.ts). */
import fs from 'node:fs';
import path from 'node:path';

export interface FiredFailpoint {
  pid: number;
  /** Wall-clock ms when it fired (same machine as the database). */
  at: number;
  detail: unknown;
}

/** The marker, or null while the point has not fired (or its file is still being written). */
export function firedFailpoint(dir: string, name: string): FiredFailpoint | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, `${name}.fired`), 'utf8'));
  } catch {
    return null;
  }
}
