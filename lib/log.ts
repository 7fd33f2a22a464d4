/**
 * A small structured logger: one line per event on stderr, `key=value` pairs after the
 * message. LEASEHOLD_LOG=debug|info|warn|error (default info).
 */
import { inspect } from 'node:util';

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const threshold = (): number => ORDER[(process.env.LEASEHOLD_LOG as Level) ?? 'info'] ?? ORDER.info;

/**
 * What a terminal acts on, or reorders, rather than shows: controls (ESC, and C1 ones such as
 * CSI, which JSON.stringify leaves as they are), bidirectional and other format characters,
 * line separators. A queue name, a job's error or a key comes from producers and handlers, and
 * must not clear or rewrite the screen of an operator reading the log: each is written as
 * \uXXXX, which also keeps one event to one line.
 */
const UNSHOWABLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const shown = (line: string) => line.replace(UNSHOWABLE, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);

function fmt(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'string') return /[\s"=\p{Cc}\p{Cf}]/u.test(v) ? JSON.stringify(v) : v;
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

export function createLogger(base: Record<string, unknown> = {}): Logger {
  const write = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < threshold()) return;
    const all = { ...base, ...fields };
    const kv = Object.entries(all)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${fmt(v)}`)
      .join(' ');
    process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${shown(`${msg}${kv ? ' ' + kv : ''}`)}\n`);
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
