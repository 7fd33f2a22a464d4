/**
 * Payload values viewers may not read. Payloads carry what a job needs — an address, a
 * customer's name, sometimes a token — and a read-only role exists so that more people can
 * watch the queue than can act on it: they should see the shape of a payload, not its secrets.
 * LEASEHOLD_REDACT_KEYS names keys (at any depth, case-insensitive) whose values the API shows
 * viewers as "[redacted]" — in payloads, checkpoints, results and schedules; operators and
 * admins, who requeue and edit what they see, read them whole, as does everyone when sign-in is
 * off (there is no viewer then). A viewer's payload filter on such a key by value is refused:
 * it would answer "is the password hunter2?" one job at a time.
 *
 * Error messages and stacks are not touched: they are the handler's text, and what it puts
 * there is its own to keep clean.
 */
import type { Principal } from '../auth/roles';
import { QueueError } from '../queue/errors';
import { type JobFilter, parsePayloadFilter } from '../queue/filters';
import { type JsonNode, parseJson, printJson } from '../ui/json';

export const REDACTED = '[redacted]';

/** The keys hidden from one reader, lower-cased; null when it may read everything. */
export type Redaction = ReadonlySet<string> | null;

export function redactionFor(who: Principal, keys: readonly string[]): Redaction {
  if (!keys.length || who.role === 'operator' || who.role === 'admin') return null;
  return new Set(keys.map((k) => k.toLowerCase()));
}

const hidden = (r: ReadonlySet<string>, key: string) => r.has(key.toLowerCase());

/** A copy of a JSON value with the values of hidden keys replaced, at any depth. */
export function redactValue<T>(v: T, r: Redaction): T {
  if (!r || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => redactValue(x, r)) as T;
  // Own properties whatever the key: `out[k] =` with a payload's "__proto__" key set the
  // copy's prototype instead, and the key vanished from what viewers read.
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hidden(r, k) ? REDACTED : redactValue(x, r)])) as T;
}

function redactNode(n: JsonNode, r: ReadonlySet<string>): JsonNode {
  if (n.kind === 'array') return { kind: 'array', items: n.items.map((x) => redactNode(x, r)) };
  if (n.kind !== 'object') return n;
  return { kind: 'object', entries: n.entries.map(([k, x]) => [k, hidden(r, k) ? { kind: 'string', value: REDACTED } : redactNode(x, r)]) };
}

/** JSON text with the values of hidden keys replaced, every other number as written. */
export function redactJsonText(text: string, r: Redaction): string {
  if (!r) return text;
  try {
    return printJson(redactNode(parseJson(text), r));
  } catch {
    // The display parser refuses some JSON that is valid (nested past its depth, a number
    // longer than it reads): redacted through JSON.parse then, its big numbers rounded — never
    // the text whole, which would hand a viewer every hidden value in it.
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON (a result stored as text): no keys to hide in it.
    return text;
  }
  return JSON.stringify(redactValue(value, r), null, 2);
}

/** A job as the API shows it, for this reader: payload and checkpoints redacted. */
export function redactJob<J extends { payload: unknown; checkpoints?: unknown }>(j: J, r: Redaction): J {
  if (!r) return j;
  return { ...j, payload: redactValue(j.payload, r), ...('checkpoints' in j ? { checkpoints: redactValue(j.checkpoints, r) } : {}) };
}

/** A list of jobs, for this reader (the list, the lookup). */
export const redactJobs = <J extends { payload: unknown; checkpoints?: unknown }>(jobs: J[], r: Redaction): J[] => (r ? jobs.map((j) => redactJob(j, r)) : jobs);

/**
 * Refuses a filter that would test a hidden key's value: by a value, or by the presence of a
 * key inside it (`payload=apiKeys.sk_live_1` would tell whether the hidden object holds that
 * key, one guess at a time). The hidden key's own presence tells nothing of its value.
 */
export function checkFilterRedaction(f: Pick<JobFilter, 'payload'>, r: Redaction): void {
  if (!r || !f.payload) return;
  const parsed = parsePayloadFilter(f.payload);
  if (!parsed) return;
  const at = parsed.path.findIndex((k) => hidden(r, k));
  if (at === -1) return;
  const inside = at < parsed.path.length - 1;
  if (!('value' in parsed) && !inside) return;
  const why = 'value' in parsed ? 'it cannot be filtered by value' : 'what it holds cannot be filtered on';
  throw new QueueError(
    'forbidden',
    `payload.${parsed.path.join('.')}: "${parsed.path[at]}" is hidden from viewers (LEASEHOLD_REDACT_KEYS), so ${why}; filter by its presence (payload=${parsed.path.slice(0, at + 1).join('.')}) or ask an operator`,
  );
}

/**
 * A filter as an audit entry or a saved view keeps it, for this reader: a hidden key's tested
 * value left out, and what the filter named inside a hidden key (`apiKeys.sk_live_1`, tested
 * for presence: a key name is data too), as checkFilterRedaction refuses both.
 */
export function redactFilter<F extends { payload?: unknown }>(f: F, r: Redaction): F {
  if (!r || typeof f.payload !== 'string') return f;
  const parsed = parsePayloadFilter(f.payload);
  const at = parsed ? parsed.path.findIndex((k) => hidden(r, k)) : -1;
  if (!parsed || at === -1) return f;
  const upToHidden = parsed.path.slice(0, at + 1).join('.');
  if (at < parsed.path.length - 1) return { ...f, payload: `${upToHidden}.${REDACTED}` };
  return 'value' in parsed ? { ...f, payload: `${upToHidden}=${REDACTED}` } : f;
}

/**
 * A saved view's query string (lib/views/pages.ts), for this reader: its payload filter on a
 * hidden key keeps the key, not the value tested, as an audit entry's filter does. A view is
 * listed to everyone, so an operator's `payload=password=hunter2` would otherwise tell every
 * viewer the value; opening the redacted view, a viewer is told why it filters nothing.
 */
export function redactViewQuery(query: string, r: Redaction): string {
  if (!r) return query;
  const params = new URLSearchParams(query);
  const payload = params.get('payload');
  if (payload === null) return query;
  const redacted = redactFilter({ payload }, r).payload;
  if (redacted === payload) return query;
  params.set('payload', redacted);
  return params.toString();
}
