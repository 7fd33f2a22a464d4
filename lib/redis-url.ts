import net from 'node:net';
import { DEFAULT_REDIS_URL, redisDisabled } from './config';

/** Whether something answers PING at this Redis URL within `timeoutMs`. */
export function redisAnswers(url: string, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve(false);
    }
    const sock = net.connect({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => {
      if (u.password) sock.write(`AUTH ${u.username ? u.username + ' ' : ''}${decodeURIComponent(u.password)}\r\n`);
      sock.write('PING\r\n');
    });
    sock.on('data', (d) => done(d.toString().includes('PONG')));
  });
}

/**
 * The Redis the processes should use: REDIS_URL when set (even if it is down right now:
 * the workers fall back to PostgreSQL and return to Redis when it comes up); otherwise
 * the default local Redis if it answers; otherwise none.
 */
export async function resolveRedisUrl(env: string | undefined): Promise<string | null> {
  if (redisDisabled(env)) return null;
  if (env) return env;
  return (await redisAnswers(DEFAULT_REDIS_URL)) ? DEFAULT_REDIS_URL : null;
}

/**
 * `npm start`'s line about Redis (`url` already redacted): the one in use with its keys, or
 * that the workers claim from PostgreSQL — also when REDIS_URL names a server that does not
 * answer (kept: the workers return to it once it does).
 */
export function redisBanner(url: string | null, prefix: string, answering: boolean): string {
  const fromPg = 'workers claim from PostgreSQL (poll + LISTEN/NOTIFY)';
  if (!url) return `none: ${fromPg}`;
  return `${url} (keys ${prefix}:*)${answering ? '' : `, not answering: ${fromPg} until it does`}`;
}
