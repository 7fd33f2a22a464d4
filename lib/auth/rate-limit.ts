/**
 * Sign-in attempts, limited per account and per address: after too many failures in the
 * window, sign-in answers 429 until the window has passed (a success clears the account).
 *
 * Kept in memory in the console process: there is one console process per installation
 * (npm start / npm run web), a restart forgetting the counts only resets the window. An
 * attempt counts from the moment it starts (signInAttempt), not once its password check
 * answers: a burst of guesses sent together is limited like guesses sent one by one. Several console
 * replicas behind a balancer would each count alone (documented in the README).
 */
import { log } from '../log';

export const WINDOW_MS = 15 * 60 * 1000;
export const MAX_PER_ACCOUNT = 10;
export const MAX_PER_ADDRESS = 50;

/** Keys kept at most; past it the least recently failed are forgotten first. */
export const MAX_KEYS = 20_000;

// Two maps, each in the order it should be forgotten in, so that making room costs a step or
// two however full they are: the keys under their limit, least recently failed first (a
// failure deletes and re-inserts its keys, so a spray of names from one address evicts old
// keys, never that address's own count), and the keys that reached it, the first blocked
// first (a blocked key is counted no more, so it is also the first whose window ends).
const counting = new Map<string, number[]>();
const blocked = new Map<string, number[]>();

function recent(key: string, now: number): number[] {
  const list = (counting.get(key) ?? blocked.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
  if (!list.length) forget(key);
  return list;
}

function forget(key: string) {
  counting.delete(key);
  blocked.delete(key);
}

/** Files a key's failures in the map its count says, last in that map's order. */
function file(key: string, list: number[]) {
  forget(key);
  (list.length >= limitOf(key) ? blocked : counting).set(key, list);
}

/**
 * The first-admin setup link: counted per address only. It is 256 random bits, which no
 * number of guesses finds; a count of its own, shared by every address, would only let anyone
 * who reaches the port keep the real link refused (ten wrong links every quarter hour).
 */
export const SETUP_LINK = Symbol('setup link');
type Account = string | typeof SETUP_LINK;
/** The keys an attempt counts under: the account's (none for the setup link) and the address's. */
const keysOf = (account: Account, address: string) => (account === SETUP_LINK ? [] : [`a:${account.toLowerCase()}`]).concat(`ip:${address}`);
const limitOf = (key: string) => (key.startsWith('ip:') ? MAX_PER_ADDRESS : MAX_PER_ACCOUNT);

/** Seconds until this account / address may try again, or 0. */
export function signInBlockedFor(account: Account, address: string, now = Date.now()): number {
  const until = keysOf(account, address).map((key) => {
    const list = recent(key, now);
    return list.length >= limitOf(key) ? list[0]! + WINDOW_MS : 0;
  });
  return Math.max(0, Math.ceil((Math.max(...until) - now) / 1000));
}

export function signInFailed(account: Account, address: string, now = Date.now()) {
  const keys = keysOf(account, address);
  for (const key of keys) file(key, [...recent(key, now), now].slice(-limitOf(key)));
  forgetPastBound(now, keys);
}

/**
 * Past MAX_KEYS, forgets keys: never those of the attempt being counted, and none that is
 * blocked while another can go. A blocked account is counted no more (refused attempts are not
 * failures), so it grows old, and a spray of names from enough addresses would otherwise
 * forget it and give back its guesses. In order: a key blocked once whose window has passed,
 * the least recently failed key under its limit, and when every other key is blocked (a spray
 * that filled the map with blocked keys) the first blocked: the attempt in hand is still
 * counted, never the key dropped in its place.
 */
function forgetPastBound(now: number, inHand: readonly string[]) {
  while (counting.size + blocked.size > MAX_KEYS) {
    const firstBlocked = firstOf(blocked, inHand);
    const victim =
      firstBlocked !== null && recent(firstBlocked, now).length < limitOf(firstBlocked) ? firstBlocked : (firstOf(counting, inHand) ?? firstBlocked);
    if (victim === null) return; // only the attempt's own keys: within the bound again next time
    forget(victim);
  }
}

/** The first key of a map that is not one of the attempt's own (at most two are skipped). */
function firstOf(map: Map<string, number[]>, inHand: readonly string[]): string | null {
  for (const key of map.keys()) if (!inHand.includes(key)) return key;
  return null;
}

/** The password was right: the account's failures are forgotten. */
export function signInSucceeded(account: Account) {
  if (account !== SETUP_LINK) forget(`a:${account.toLowerCase()}`);
}

/** Takes back the one failure counted at `at` for this account and address (an attempt that was no guess). */
function withdraw(account: Account, address: string, at: number) {
  for (const key of keysOf(account, address)) {
    const list = counting.get(key) ?? blocked.get(key);
    const k = list?.lastIndexOf(at) ?? -1;
    if (k < 0) continue;
    list!.splice(k, 1);
    // Back under its limit: counting again, not kept as a blocked key.
    if (blocked.has(key) && list!.length < limitOf(key)) file(key, list!);
  }
}

export interface SignInAttempt {
  /** Seconds to wait: the attempt was refused, and nothing counted. 0: go on. */
  wait: number;
  /** The password (or link) was right: the account's failures are forgotten, this attempt too. */
  succeeded(): void;
  /** It was no guess after all (invalid input, the database away): this attempt is taken back, nothing else. */
  noGuess(): void;
}

/**
 * Starts a sign-in attempt: refused (`wait` seconds, nothing counted) while the account or
 * the address is blocked; otherwise counted as a failure at once, before the password is
 * checked. Counted only once the check answered (one scrypt: tens of milliseconds, far
 * longer under load), every guess of a burst sent together had passed the block before the
 * first failure was counted: 300 guesses got 300 answers. A wrong password leaves it counted.
 */
export function signInAttempt(account: Account, address: string, now = Date.now()): SignInAttempt {
  const wait = signInBlockedFor(account, address, now);
  if (wait > 0) return { wait, succeeded: () => {}, noGuess: () => {} };
  signInFailed(account, address, now);
  return {
    wait: 0,
    succeeded: () => {
      signInSucceeded(account);
      withdraw(account, address, now);
    },
    noGuess: () => withdraw(account, address, now),
  };
}

/** Set by worker/http-guard.mjs on every request from the TCP connection itself. */
export const PEER_HEADER = 'x-leasehold-peer';

/**
 * The mark worker/http-guard.mjs leaves on globalThis when it is preloaded. Without the
 * guard (Next started by hand, not through npm start / npm run web) nothing overwrites
 * PEER_HEADER, so a client could send a new one with each attempt and never be counted.
 */
export const PEER_GUARD = Symbol.for('leasehold.http-guard');
export const UNGUARDED_ADDRESS = 'unguarded';
const peerGuarded = () => (globalThis as Record<symbol, unknown>)[PEER_GUARD] === true;

/**
 * The address a sign-in attempt came from: the TCP peer. Behind a reverse proxy the
 * operator declared (LEASEHOLD_TRUST_PROXY=1) the peer is the proxy, and the client is the
 * last X-Forwarded-For hop — the one that proxy appended; the hops before it are whatever
 * the client sent, so they are never used. With no guard to set the peer, every attempt
 * shares one address (stricter, never looser), and the console says so once.
 */
export function clientAddress(req: Request, trustProxy = process.env.LEASEHOLD_TRUST_PROXY === '1', guarded = peerGuarded()): string {
  const hops = trustProxy ? (req.headers.get('x-forwarded-for') ?? '').split(',').map((h) => h.trim()).filter(Boolean) : [];
  if (!hops.length && !guarded) warnUnguarded();
  const peer = guarded ? req.headers.get(PEER_HEADER) : UNGUARDED_ADDRESS;
  return (hops[hops.length - 1] || peer || 'local').slice(0, 64);
}

let warned = false;
function warnUnguarded() {
  if (warned) return;
  warned = true;
  log.warn('the console runs without worker/http-guard.mjs (start it with npm start or npm run web): sign-in failures are counted for all addresses together');
}
