/** What the measuring scripts share: `--name value` options and percentiles of timings. */

const args = process.argv.slice(2);

/** The value after `--name` on the command line, or `dflt`. */
export function option(name: string, dflt: string): string {
  const k = args.indexOf(`--${name}`);
  return k >= 0 && args[k + 1] ? args[k + 1]! : dflt;
}

/** Whether the bare flag `--name` is given. */
export const flag = (name: string): boolean => args.includes(`--${name}`);

/** A numeric `--name value` (underscores allowed: 1_000_000), or `dflt`. */
export const numberOption = (name: string, dflt: number): number => Number(option(name, String(dflt)).replace(/_/g, ''));

/** The p-th percentile (nearest rank) of `xs`; NaN when there are none. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! : NaN;
}

/** Fetches `url` and reads its JSON; `ms` runs until the body was read. Throws on a non-2xx answer. */
export async function timedJson(url: string, init?: RequestInit): Promise<{ ms: number; json: any }> {
  const t = performance.now();
  const res = await fetch(url, init);
  const json = await res.json();
  const ms = performance.now() - t;
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return { ms, json };
}
