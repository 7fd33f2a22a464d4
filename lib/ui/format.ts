/** Display formatting shared by the console's components (pure functions). */

/** 41 s · 3 min 12 s · 2 h 5 min · 3 d 4 h */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const neg = ms < 0;
  let s = Math.floor(Math.abs(ms) / 1000);
  let out: string;
  if (s < 60) out = `${s} s`;
  else if (s < 3600) out = `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  else if (s < 86400) {
    s = Math.floor(s / 60);
    out = `${Math.floor(s / 60)} h${s % 60 ? ` ${s % 60} min` : ''}`;
  } else {
    s = Math.floor(s / 3600);
    out = `${Math.floor(s / 24)} d${s % 24 ? ` ${s % 24} h` : ''}`;
  }
  return neg ? `-${out}` : out;
}

/** Sub-second precision below 10 s (for small ages). */
export function shortDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`;
  return duration(ms);
}

export const ago = (ms: number | null | undefined) => (ms === null || ms === undefined ? '—' : `${duration(Math.max(0, ms))} ago`);

export const int = (n: number) => Math.round(n).toLocaleString('en');

/** 1,234 · 12.3k · 1.20M. The unit is chosen by what the rounded number shows: 999,600 is 1.00M, not 1000k. */
export function compact(n: number): string {
  if (n < 10_000) return int(n);
  if (n < 99_950) return `${(n / 1000).toFixed(1)}k`;
  if (n < 999_500) return `${(n / 1000).toFixed(0)}k`;
  if (n < 9_995_000) return `${(n / 1_000_000).toFixed(2)}M`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A moment in the browser's time zone, named (`31 Dec 2029, 16:00:00 PST`): operators compare them with logs in UTC and crons in their own zones. */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString('en-GB', { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
}

export const ms = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);

/** A handler's run time, precise where it matters: 0.8 ms · 42 ms · 2.4 s · 3 min 12 s. */
export function runTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return duration(ms);
}
