/** Reads server-sent events from a response body, as an EventSource would (tests). */
export interface SseEvent {
  event: string;
  data: string;
}

export class SseReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffered = '';
  /** The `retry:` the stream asked for, once seen. */
  retryMs: number | null = null;

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** The next event, or null when the stream ended. */
  async next(): Promise<SseEvent | null> {
    for (;;) {
      const end = this.buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
          else if (line.startsWith('retry: ')) this.retryMs = Number(line.slice(7));
        }
        if (data.length) return { event, data: data.join('\n') };
        continue;
      }
      const { done, value } = await this.reader.read();
      if (done) return null;
      this.buffered += this.decoder.decode(value, { stream: true });
    }
  }

  /** Events until one satisfies `until` (returned), failing past the deadline or at the stream's end. */
  async until(until: (e: SseEvent) => boolean, deadlineMs = 20_000): Promise<SseEvent> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no such event before the deadline');
      let timer: NodeJS.Timeout | undefined;
      const e = await Promise.race([
        this.next(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no such event before the deadline')), left))),
      ]).finally(() => clearTimeout(timer));
      if (!e) throw new Error('the stream ended');
      if (until(e)) return e;
    }
  }

  cancel() {
    return this.reader.cancel();
  }
}
