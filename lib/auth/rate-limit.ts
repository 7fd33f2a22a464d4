/**
 * Sign-in attempts, limited per account and per address: after too many failures in the
 * window, sign-in answers 429 until the window has passed (a success clears the account).
 *
 * Kept in memory in the console process: there is one console process per installation
 * (npm start / npm run web), a restart forgetting the counts only resets the window, and
 * the cost of each attempt (one scrypt) is paid before it counts. Several console
 * replicas behind a balancer would each count alone (documented in the README).
 */
export const WINDOW_MS = 15 * 60 * 1000;
export const MAX_PER_ACCOUNT = 10;
export const MAX_PER_ADDRESS = 50;

const failures = new Map<string, number[]>();

function recent(key: string, now: number): number[] {
  const list = (failures.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
  if (list.length) failures.set(key, list);
  else failures.delete(key);
  return list;
}

/** Seconds until this account / address may try again, or 0. */
export function signInBlockedFor(account: string, address: string, now = Date.now()): number {
  const a = recent(`a:${account.toLowerCase()}`, now);
  const b = recent(`ip:${address}`, now);
  const until = [a.length >= MAX_PER_ACCOUNT ? a[0]! + WINDOW_MS : 0, b.length >= MAX_PER_ADDRESS ? b[0]! + WINDOW_MS : 0];
  return Math.max(0, Math.ceil((Math.max(...until) - now) / 1000));
}

export function signInFailed(account: string, address: string, now = Date.now()) {
  if (failures.size > 100_000) failures.clear(); // bounded memory under a spray of names
  for (const key of [`a:${account.toLowerCase()}`, `ip:${address}`]) failures.set(key, [...recent(key, now), now]);
}

export function signInSucceeded(account: string) {
  failures.delete(`a:${account.toLowerCase()}`);
}

export function clientAddress(req: Request): string {
  return (req.headers.get('x-forwarded-for')?.split(',')[0]?.trim() || req.headers.get('x-real-ip') || 'local').slice(0, 64);
}
