/**
 * The jobs list's time filters (`createdSince`, `finishedSince`): a moment, or a span back from
 * now. Shared by the API's validation, the SQL (lib/queue/filters.ts) and the console's bar.
 *
 * A span (`15m`, `1h`, `24h`, `7d`) is a window that moves: a link to "failed in the last hour"
 * shows the last hour whenever it is opened, reckoned on the database's clock (the workers'
 * and the browser's may be off). A moment (ISO 8601 with its offset) stays where it is.
 */
export const SINCE_SPAN = /^([1-9]\d{0,3})([mhd])$/;
export const SINCE_MOMENT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(Z|[+-](\d{2}):(\d{2}))$/;

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export type Since = { span: true; ms: number } | { span: false; at: string };

/** A time filter's value, or null when it is neither a span nor a moment. */
export function parseSince(text: string): Since | null {
  const s = text.trim();
  const m = SINCE_SPAN.exec(s);
  if (m) return { span: true, ms: Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] };
  const at = SINCE_MOMENT.exec(s);
  if (!at || !realMoment(at)) return null;
  // 9999-12-31T23:59-01:00 is in the year 10000 in UTC: an ISO text PostgreSQL refuses.
  const ms = Date.parse(s);
  return ms < LAST_MOMENT_MS ? { span: false, at: new Date(ms).toISOString() } : null;
}

const LAST_MOMENT_MS = Date.UTC(10000, 0, 1);

/**
 * Whether a moment's fields name a real one. Date.parse rolls 2026-02-30 over to March and
 * takes offsets up to ±23:59 and the year 0, which PostgreSQL refuses (a 500 where a 400 was
 * due); the moment then travels as the UTC ISO text of what was checked here.
 */
function realMoment([, y, mo, d, h, mi, sec = '0', , , oh = '0', om = '0']: RegExpExecArray): boolean {
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate(); // the month's last day
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > days) return false;
  return Number(h) <= 23 && Number(mi) <= 59 && Number(sec) <= 59 && Number(oh) <= 15 && Number(om) <= 59;
}

/** The console's presets. */
export const SINCE_PRESETS = [
  ['15m', '15 minutes'],
  ['1h', 'hour'],
  ['24h', '24 hours'],
  ['7d', '7 days'],
] as const;

/** How a time filter reads: "in the last hour", "since 2026-12-03 13:00 UTC". */
export function sinceText(text: string): string {
  const s = parseSince(text);
  if (!s) return text;
  if (s.span) {
    const preset = SINCE_PRESETS.find(([v]) => v === text.trim());
    return preset ? `in the last ${preset[1]}` : `in the last ${text.trim()}`;
  }
  return `since ${new Date(s.at).toISOString().replace('T', ' ').replace(/:\d{2}\.\d{3}Z$/, ' UTC')}`;
}
