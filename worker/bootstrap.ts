/**
 * Finds the services a Leasehold process needs, the same way for every entry point
 * (npm start, npm run web, npm run worker, the CLI): PostgreSQL from DATABASE_URL or the
 * embedded server, Redis from REDIS_URL or the local default if it answers.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Config, loadConfig } from '../lib/config';
import { isUnreachable } from '../lib/db/client';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../lib/db/embedded';
import type { Logger } from '../lib/log';
import { resolveRedisUrl } from '../lib/redis-url';
import { visible } from '../lib/ui/visible';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The tsx loader, by absolute URL, for `node --import` in child processes. */
export const tsxImport = import.meta.resolve('tsx');

export interface Services {
  databaseUrl: string;
  embedded: EmbeddedDatabase | null;
  redisUrl: string | null;
}

export async function resolveServices(cfg: Config, log: Logger): Promise<Services> {
  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = cfg.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(path.resolve(projectRoot, cfg.dataDir), (m) => log.info(m));
    databaseUrl = embedded.url;
  }
  const redisUrl = await resolveRedisUrl(cfg.redisUrl);
  return { databaseUrl, embedded, redisUrl };
}

/**
 * Runs a start-up step (migrations, the console build) and, should it fail, stops the
 * embedded server this process started before the error goes on: pg_ctl runs it in a
 * session of its own, so nothing else would, and every later run would find it running,
 * take it for another process's and never stop it either.
 */
export async function orStopEmbedded<T>(services: Services, step: () => Promise<T> | T): Promise<T> {
  try {
    return await step();
  } catch (err) {
    await services.embedded?.stop().catch(() => {});
    throw err;
  }
}

/**
 * A start that cannot go on (the database unreachable, the port taken, a bad setting):
 * one line saying why, and exit 1 — not an uncaught error's stack.
 */
export function startFailed(log: Logger, err: unknown): never {
  const e = err as { code?: string; message?: string };
  log.error(isUnreachable(err) ? `cannot reach PostgreSQL (DATABASE_URL): ${e.message || e.code}` : `could not start: ${e?.message ?? String(err)}`);
  process.exit(1);
}

/**
 * The configuration of an entry point (npm start, npm run worker / web): a bad setting is
 * said the way the CLI says it — `leasehold: invalid configuration:` and a line per
 * problem — with exit 2 (usage), not an uncaught error's stack.
 */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    console.error(configErrorText(err) ?? `leasehold: ${visible(String((err as Error)?.message ?? err))}`);
    process.exit(2);
  }
}

/** loadConfig's refusal as the command line prints it (one problem a line, each escaped), or null for any other error. */
export function configErrorText(err: unknown): string | null {
  const message = (err as Error)?.message;
  if (!message?.startsWith('invalid configuration')) return null;
  // Each line shown as it is, not its newline as an escape.
  return `leasehold: ${message.split('\n').map((line) => visible(line)).join('\n')}`;
}

/** "postgres://user:***@host:port/db" — never print a password. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
