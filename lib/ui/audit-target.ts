/**
 * What an audit entry applied to, in words: a bulk action's filter as its conditions
 * ("status = failed, queue = emails, error group = 3fa2…"), not the JSON it is stored as.
 * Values are returned as written (text, never HTML): the console renders them escaped
 * (components/ui/user-text.tsx), and the raw JSON stays one click away.
 */
import { sinceText } from '../since';

export interface FilterCondition {
  label: string;
  op: string;
  value: string;
}

/** The jobs list's filters (lib/api/filters.ts FILTER_FIELDS), in its order, then the pins a preview adds. */
const CONDITIONS: Record<string, { label: string; op: string }> = {
  status: { label: 'status', op: '=' },
  queue: { label: 'queue', op: '=' },
  type: { label: 'type', op: '=' },
  id: { label: 'job id', op: '=' },
  worker: { label: 'worker', op: '=' },
  error: { label: 'error', op: 'contains' },
  payload: { label: 'payload', op: 'has' },
  fingerprint: { label: 'error group', op: '=' },
  minAttempts: { label: 'attempts', op: '≥' },
  priority: { label: 'priority', op: '=' },
  due: { label: 'due', op: '=' },
  createdSince: { label: 'enqueued', op: '' },
  finishedSince: { label: 'finished', op: '' },
  q: { label: 'search', op: 'matches' },
  maxId: { label: 'job id', op: '≤' },
  finishedBy: { label: 'finished', op: 'by' },
};
const ORDER = Object.keys(CONDITIONS);

const valueText = (key: string, v: unknown): string => {
  // A preview's pin: microseconds since 1970 on the database clock.
  if (key === 'finishedBy' && typeof v === 'string' && /^\d{1,17}$/.test(v)) {
    const d = new Date(Number(BigInt(v) / 1000n));
    if (!Number.isNaN(d.getTime())) return d.toISOString();
  }
  // A time filter: "in the last hour", "since 2026-12-03 13:00 UTC".
  if ((key === 'createdSince' || key === 'finishedSince') && typeof v === 'string') return sinceText(v);
  return typeof v === 'string' ? v : JSON.stringify(v);
};

/** A filter's conditions, known keys in the jobs list's order, unknown ones after them by name. */
export function filterConditions(filter: Record<string, unknown>): FilterCondition[] {
  const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  return Object.entries(filter)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([k, v]) => ({ ...(CONDITIONS[k] ?? { label: k, op: '=' }), value: valueText(k, v) }));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A bulk target's conditions: its filter, the maxId the API resolved it against (kept
 * beside the filter), and the CLI's --limit.
 */
export function targetConditions(t: Record<string, unknown>): FilterCondition[] | null {
  if (!isRecord(t.filter)) return null;
  const conds = filterConditions({ ...t.filter, ...(t.maxId !== undefined && t.filter.maxId === undefined ? { maxId: t.maxId } : {}) });
  if (typeof t.limit === 'number') conds.push({ label: 'at most', op: '', value: String(t.limit) });
  return conds;
}

export const conditionText = (c: FilterCondition) => [c.label, c.op, c.value].filter(Boolean).join(' ');

/** The whole target in one line of text (the table's cell, a tooltip, a test). */
export function targetText(t: Record<string, unknown>): string {
  const conds = targetConditions(t);
  if (conds) return conds.length ? `jobs where ${conds.map(conditionText).join(', ')}` : 'every job (no condition)';
  if (Array.isArray(t.ids)) return t.ids.length === 1 ? `job #${String(t.ids[0])}` : `${t.ids.length} jobs`;
  if (t.all) return 'the whole sweep';
  if (typeof t.queue === 'string') return `queue ${t.queue}`;
  if (t.user !== undefined) return `user ${String(t.user)}`;
  if (t.token !== undefined) return `token ${String(t.token)}${t.name ? ` (${String(t.name)})` : ''}`;
  if (t.schedule !== undefined) return `schedule ${String(t.schedule)}`;
  if (t.worker !== undefined) return `worker ${String(t.worker)}`;
  if (t.view !== undefined) return `view ${String(t.view)}${typeof t.page === 'string' ? ` on /${t.page}` : ''}`;
  return JSON.stringify(t);
}
