/**
 * A small structured logger: one line per event on stderr, `key=value` pairs after the
 * message. LEASEHOLD_LOG=debug|info|warn|error (default info).
 */
import { inspect } from 'node:util';
import { hasHidden, visible } from './ui/visible';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const threshold = (): number => ORDER[(process.env.LEASEHOLD_LOG as Level) ?? 'info'] ?? ORDER.info;

function fmt(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'string') return /[\s"=]/.test(v) || hasHidden(v) ? JSON.stringify(v) : v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    // A circular object or a BigInt (a rejection's reason can be anything): a log line must
    // never throw, least of all from the handler that keeps a worker alive after a rejection.
    return JSON.stringify(inspect(v, { depth: 2, breakLength: Infinity }));
  }
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/**
 * A line is written through `visible` (lib/ui/visible.ts): a queue name, a job's error or a key
 * comes from producers and handlers, and its control characters (ESC; C1 ones such as CSI,
 * which JSON.stringify leaves as they are), bidirectional controls and line separators must not
 * clear, retitle or reorder the terminal of an operator reading the log. It also keeps one
 * event to one line.
 */
export function createLogger(base: Record<string, unknown> = {}): Logger {
  const write = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < threshold()) return;
    const all = { ...base, ...fields };
    const kv = Object.entries(all)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${fmt(v)}`)
      .join(' ');
    process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${visible(`${msg}${kv ? ' ' + kv : ''}`)}\n`);
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }),
  };
}

export const log = createLogger();
