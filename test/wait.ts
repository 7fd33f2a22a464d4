/** Waiting for conditions, never for fixed times: poll until true or fail at a generous deadline. */
import { setTimeout as sleep } from 'node:timers/promises';

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T> | T,
  { timeoutMs = 60_000, intervalMs = 50 } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as Truthy<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await sleep(intervalMs);
  }
}
