/** Reads the marker a fired failpoint leaves in LEASEHOLD_FAILPOINTS_ONCE_DIR (see lib/failpoints.ts). */
import fs from 'node:fs';
import path from 'node:path';
import { markerFile } from '../lib/failpoints';

export interface FiredFailpoint {
  pid: number;
  /** Wall-clock ms when it fired (same machine as the database). */
  at: number;
  detail: unknown;
}

/** The marker, or null while the point has not fired (or its file is still being written). */
export function firedFailpoint(dir: string, name: string, k = 1): FiredFailpoint | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, markerFile(name, k)), 'utf8'));
  } catch {
    return null;
  }
}

/** The markers of a point armed with `*n` across processes, in firing order; null until all n are written. */
export function firedFailpoints(dir: string, name: string, n: number): FiredFailpoint[] | null {
  const fired = Array.from({ length: n }, (_, k) => firedFailpoint(dir, name, k + 1));
  return fired.every((f) => f !== null) ? (fired as FiredFailpoint[]) : null;
}
