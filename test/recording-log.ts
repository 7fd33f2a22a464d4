/** A logger that keeps its lines, and the restart delays they name (`restartInMs`), for a test to read. */
import type { Logger } from '../lib/log';

export function recordingLog() {
  const lines: string[] = [];
  const delays: number[] = [];
  const keep = (m: string, f?: Record<string, unknown>) => {
    lines.push(m);
    if (typeof f?.restartInMs === 'number') delays.push(f.restartInMs);
  };
  const log: Logger = { debug: () => {}, info: () => {}, warn: keep, error: keep, child: () => log };
  return { log, lines, delays };
}
