/**
 * Read models every viewer polls, shared by all viewers of this console process for a
 * short time (READ_CACHE_MS unless a route asks for longer): ten open jobs pages polling
 * every second ask PostgreSQL once a second for the same page and the same "N new" count,
 * not ten times, and a request arriving while that read runs joins it. An operator's
 * action through this process clears the cache (lib/http/respond.ts), so they see its
 * effect at once; what workers and other consoles change shows
 * within the entry's time, less than a refresh interval of the page.
 */

export const READ_CACHE_MS = 1_000;
/** Entries kept at most (a page of the console is one; viewers rarely need more than a few). */
const MAX_ENTRIES = 100;

interface Entry {
  ttlMs: number;
  /** When the read answered (performance.now()), so a cached answer can say how old it is. */
  answeredAt?: number;
  value: Promise<unknown>;
}

/** An answer older than its time; a read still running is never expired. */
const expired = (e: Entry, now: number) => e.answeredAt !== undefined && now - e.answeredAt >= e.ttlMs;

export class ReadCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly ttlMs = READ_CACHE_MS) {}

  /**
   * The answer for `key` that arrived at most ttlMs ago, or the read of it still running
   * (however slow: it is joined, never started again beside it), else `load()`'s (always,
   * with `fresh`); with its age, by which an answer that carries the database clock moves it on.
   */
  async get<T>(
    key: string,
    load: () => Promise<T>,
    opts: { ttlMs?: number; fresh?: boolean } = {},
  ): Promise<{ value: T; ageMs: number }> {
    const ttlMs = opts.ttlMs ?? this.ttlMs;
    const now = performance.now();
    let entry = this.entries.get(key);
    // fresh: a read of its own, started now (not even a running one is joined: it may have
    // begun before what the caller knows of), which then serves the others.
    if (!entry || expired(entry, now) || opts.fresh) {
      this.dropExpired(now);
      const fresh: Entry = { ttlMs, value: load() };
      fresh.value = fresh.value.then((v) => {
        fresh.answeredAt = performance.now();
        return v;
      });
      // A failed read is not kept: the next viewer asks again (and sees its own error).
      fresh.value.catch(() => {
        if (this.entries.get(key) === fresh) this.entries.delete(key);
      });
      this.entries.delete(key); // re-inserted last: the Map's order is then oldest first
      this.entries.set(key, fresh);
      while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      entry = fresh;
    }
    const value = (await entry.value) as T;
    return { value, ageMs: Math.max(0, performance.now() - entry.answeredAt!) };
  }

  clear() {
    this.entries.clear();
  }

  /** Entries held (tests). */
  get size() {
    return this.entries.size;
  }

  /** Expired entries are dropped as new ones come (oldest first), so none outlives its use. */
  private dropExpired(now: number) {
    for (const [key, e] of this.entries) {
      if (expired(e, now)) this.entries.delete(key);
    }
  }
}

// One per process, whichever route bundle imports it first (Next may load this module
// once per route).
const g = globalThis as unknown as { __leaseholdReadCache?: ReadCache };
export const readCache = (g.__leaseholdReadCache ??= new ReadCache());
