/**
 * Collects items submitted in the same turn of the event loop and hands them to one
 * call, so ten handlers finishing together cost one fenced statement instead of ten.
 * No timer delay: a lone item is flushed on the next setImmediate, so batching never
 * adds latency. Each submitter gets its own item's answer (or the batch's error).
 */
export class Batcher<I, R> {
  private pending: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly flushFn: (items: I[]) => Promise<R[]>,
    private readonly maxBatch = 500,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush() {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.flushFn(batch.map((b) => b.item)).then(
      (results) => batch.forEach((b, k) => b.resolve(results[k]!)),
      (err) => batch.forEach((b) => b.reject(err)),
    );
  }
}
