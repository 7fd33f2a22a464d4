/**
 * Places held by long requests (live streams, exports): counted in all and per owner (a user
 * or token: liveOwner), each with the time by which it will have ended at the latest, which a
 * refusal's Retry-After says. A place is freed once, by whichever of its ends comes first:
 * its release, or the request's signal aborting (a client gone before the body was read). One
 * past its time counts no more, whatever became of its release: a leaked place must not
 * refuse its owner until the console restarts.
 */
export class Places {
  private readonly held = new Set<{ owner: string | null; endsBy: number; request?: Request }>();

  /** Places held now: all of them, or one owner's. */
  count(owner?: string | null): number {
    const now = performance.now();
    let n = 0;
    for (const p of this.held) {
      if (p.endsBy < now) this.held.delete(p);
      else if (owner === undefined || p.owner === owner) n++;
    }
    return n;
  }

  /** Seconds until the first of the places (all, or one owner's) has ended at the latest; at least 1. */
  retryAfterS(owner?: string | null): number {
    let first = Infinity;
    for (const p of this.held) if ((owner === undefined || p.owner === owner) && p.endsBy < first) first = p.endsBy;
    return Math.max(1, Math.ceil((first - performance.now()) / 1000));
  }

  /**
   * Takes a place for `forMs` (performance.now() time: a step of the wall clock moves no
   * place) until the returned release is called (again: nothing) or `request`'s signal
   * aborts. The request is held as long as the place: its signal follows the client's
   * disconnect only while the Request object lives (undici links the two weakly).
   */
  take(owner: string | null, forMs: number, request?: Request): () => void {
    const place = { owner, endsBy: performance.now() + forMs, request };
    this.held.add(place);
    const signal = request?.signal;
    const release = () => {
      this.held.delete(place);
      signal?.removeEventListener('abort', release);
    };
    if (signal?.aborted) release();
    else signal?.addEventListener('abort', release);
    return release;
  }
}
