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
/** When a blocked key's block ends: its list holds its limit's worth, the oldest first. */
const endOf = (list: readonly number[]) => list[0]! + WINDOW_MS;

export interface SignInAttempt {
  /** Seconds to wait: the attempt was refused, and nothing counted. 0: go on. */
  wait: number;
  /** The password (or link) was right: the account's failures are forgotten, this attempt too. */
  succeeded(): void;
  /** It was no guess after all (invalid input, the database away): this attempt is taken back, nothing else. */
  noGuess(): void;
}

/** The failures of each account and address; the console process keeps one (below). */
export class SignInLimiter {
  // The keys under their limit, least recently failed first: a failure deletes and re-inserts
  // its keys, so a spray of names from one address evicts old keys, never that address's own
  // count. And the keys at their limit (blocked), with when each block ends, soonest first (a
  // binary heap): making room past the bound, and letting go of blocks that have ended, take
  // a step or two however full the maps are, where one scan of every key took milliseconds.
  private readonly counting = new Map<string, number[]>();
  private readonly blocked = new Map<string, number[]>();
  /** [end, key] of each block; an entry whose key has since been forgotten, unblocked or blocked anew is passed over when it comes up. */
  private readonly ends: [number, string][] = [];

  constructor(private readonly maxKeys = MAX_KEYS) {}

  /** Seconds until this account / address may try again, or 0. */
  blockedFor(account: Account, address: string, now = Date.now()): number {
    const until = keysOf(account, address).map((key) => {
      const list = this.recent(key, now);
      return list.length >= limitOf(key) ? endOf(list) : 0;
    });
    return Math.max(0, Math.ceil((Math.max(...until) - now) / 1000));
  }

  failed(account: Account, address: string, now = Date.now()) {
    this.lapse(now);
    const keys = keysOf(account, address);
    for (const key of keys) this.file(key, [...this.recent(key, now), now].slice(-limitOf(key)));
    this.forgetPastBound(keys);
  }

  /** The password was right: the account's failures are forgotten. */
  succeeded(account: Account) {
    if (account !== SETUP_LINK) this.forget(`a:${account.toLowerCase()}`);
  }

  /**
   * Starts a sign-in attempt: refused (`wait` seconds, nothing counted) while the account or
   * the address is blocked; otherwise counted as a failure at once, before the password is
   * checked. Counted only once the check answered (one scrypt: tens of milliseconds, far
   * longer under load), every guess of a burst sent together had passed the block before the
   * first failure was counted: 300 guesses got 300 answers. A wrong password leaves it counted.
   */
  attempt(account: Account, address: string, now = Date.now()): SignInAttempt {
    const wait = this.blockedFor(account, address, now);
    if (wait > 0) return { wait, succeeded: () => {}, noGuess: () => {} };
    this.failed(account, address, now);
    return {
      wait: 0,
      succeeded: () => {
        this.succeeded(account);
        this.withdraw(account, address, now);
      },
      noGuess: () => this.withdraw(account, address, now),
    };
  }

  /** Takes back the one failure counted at `at` for this account and address (an attempt that was no guess). */
  private withdraw(account: Account, address: string, at: number) {
    for (const key of keysOf(account, address)) {
      const list = this.counting.get(key) ?? this.blocked.get(key);
      const k = list?.lastIndexOf(at) ?? -1;
      if (k < 0) continue;
      list!.splice(k, 1);
      // Filed again: back under its limit it counts again, and a block keeps its end current.
      if (this.blocked.has(key)) this.file(key, list!);
    }
  }

  /**
   * Past the bound, forgets keys: never those of the attempt being counted, and none that is
   * blocked while another can go. A blocked account is counted no more (refused attempts are
   * not failures), so it grows old, and a spray of names from enough addresses would otherwise
   * forget it and give back its guesses. First the least recently failed key under its limit;
   * when every other key is blocked (a spray that filled the maps with blocked keys), the one
   * whose block ends first: the attempt in hand is still counted, never the key dropped in its place.
   */
  private forgetPastBound(inHand: readonly string[]) {
    while (this.counting.size + this.blocked.size > this.maxKeys) {
      const victim = this.firstCounting(inHand) ?? this.soonestBlocked(inHand);
      if (victim === null) return; // only the attempt's own keys: within the bound again next time
      this.forget(victim);
    }
  }

  /** The least recently failed key under its limit, not one of the attempt's own (at most two are passed). */
  private firstCounting(inHand: readonly string[]): string | null {
    for (const key of this.counting.keys()) if (!inHand.includes(key)) return key;
    return null;
  }

  /** The blocked key whose block ends first, not one of `skip` (the attempt's own keys). */
  private soonestBlocked(skip: readonly string[]): string | null {
    const skipped: [number, string][] = [];
    while (this.ends.length && (!this.current(this.ends[0]!) || skip.includes(this.ends[0]![1]))) {
      const entry = this.heapPop();
      if (this.current(entry)) skipped.push(entry);
    }
    const key = this.ends[0]?.[1] ?? null;
    for (const entry of skipped) this.heapPush(entry);
    return key;
  }

  /** Blocks that have ended: their keys count again, with the failures still in the window. */
  private lapse(now: number) {
    while (this.ends.length && this.ends[0]![0] <= now) {
      const entry = this.heapPop();
      if (!this.current(entry)) continue;
      const list = this.recent(entry[1], now);
      if (list.length) this.file(entry[1], list);
    }
  }

  private recent(key: string, now: number): number[] {
    const list = (this.counting.get(key) ?? this.blocked.get(key) ?? []).filter((t) => now - t < WINDOW_MS);
    if (!list.length) this.forget(key);
    return list;
  }

  private forget(key: string) {
    this.counting.delete(key);
    this.blocked.delete(key);
  }

  /** Files a key's failures in the map its count says (last in the counting order). */
  private file(key: string, list: number[]) {
    this.forget(key);
    if (list.length < limitOf(key)) return void this.counting.set(key, list);
    this.blocked.set(key, list);
    this.heapPush([endOf(list), key]);
  }

  /** The heap entry is the key's block as it stands. */
  private current([end, key]: [number, string]) {
    const list = this.blocked.get(key);
    return list !== undefined && endOf(list) === end;
  }

  private heapPush(entry: [number, string]) {
    const h = this.ends;
    let k = h.push(entry) - 1;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (h[parent]![0] <= entry[0]) break;
      h[k] = h[parent]!;
      k = parent;
    }
    h[k] = entry;
  }

  private heapPop(): [number, string] {
    const h = this.ends;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length) {
      let k = 0;
      for (;;) {
        const left = 2 * k + 1;
        const child = left + 1 < h.length && h[left + 1]![0] < h[left]![0] ? left + 1 : left;
        if (child >= h.length || h[child]![0] >= last[0]) break;
        h[k] = h[child]!;
        k = child;
      }
      h[k] = last;
    }
    return top;
  }
}

/** The console process's one limiter. */
const limiter = new SignInLimiter();
export const signInBlockedFor = (account: Account, address: string, now?: number) => limiter.blockedFor(account, address, now);
export const signInFailed = (account: Account, address: string, now?: number) => limiter.failed(account, address, now);
export const signInSucceeded = (account: Account) => limiter.succeeded(account);
export const signInAttempt = (account: Account, address: string, now?: number) => limiter.attempt(account, address, now);

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
