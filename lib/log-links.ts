/**
 * Links from an attempt to its logs (LEASEHOLD_LOG_URL): the job page knows which worker ran
 * which attempt when, and the log system holds what the handler said. Sidekiq and GoodJob
 * leave this to a template override; here it is one URL template, e.g.
 *
 *   https://kibana.example.com/app/discover#/?_g=(time:(from:'{startedAt}',to:'{finishedAt}'))&_a=(query:(language:kuery,query:'job:{id}'))
 *   https://app.datadoghq.com/logs?query=job%3A{id}&from_ts={startedMs}&to_ts={finishedMs}
 *
 * Each placeholder is replaced by its value, percent-encoded (the template's own text is kept
 * as written). Pure functions: the configuration checks the template once, the console's
 * pages expand it.
 */

/** What a template may name. */
export const LOG_URL_FIELDS = {
  id: 'the job id',
  attempt: 'the attempt number',
  worker: "the attempt's worker id (host:pid:suffix)",
  queue: 'the queue',
  type: 'the job type',
  startedAt: 'when the attempt started (ISO 8601, UTC)',
  finishedAt: 'when it ended (ISO 8601, UTC); the time of the page while it runs',
  startedMs: 'when the attempt started (ms since the epoch)',
  finishedMs: 'when it ended (ms since the epoch); the time of the page while it runs',
} as const;
export type LogUrlField = keyof typeof LOG_URL_FIELDS;

export interface LoggedAttempt {
  jobId: string;
  attempt: number;
  workerId: string;
  queue: string;
  type: string;
  startedAt: string;
  /** null while the attempt runs: the span then ends at `nowMs`. */
  finishedAt: string | null;
  /** The page's time (ms since the epoch, the database's clock): the end of a running attempt's span. */
  nowMs: number;
}

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;
/** Own fields only: `in` would take what every object inherits ({constructor}, {toString}) for a placeholder. */
const isField = (f: string): f is LogUrlField => Object.hasOwn(LOG_URL_FIELDS, f);

/** Why a template cannot be used (an unknown placeholder, not an http(s) URL), or null. */
export function logUrlTemplateProblem(template: string): string | null {
  const unknown = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((f) => !isField(f));
  if (unknown.length) return `unknown placeholder${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => `{${f}}`).join(', ')}; known: ${Object.keys(LOG_URL_FIELDS).map((f) => `{${f}}`).join(' ')}`;
  const sample = expand(template, { jobId: '1', attempt: 1, workerId: 'host:1:abc', queue: 'default', type: 'demo.noop', startedAt: new Date(0).toISOString(), finishedAt: null, nowMs: 0 });
  let url: URL;
  try {
    url = new URL(sample);
  } catch {
    return 'must be an absolute URL (https://…), with placeholders such as {id}';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http:// or https:// URL';
  return null;
}

/**
 * A value for its place in a URL: percent-encoded as encodeURIComponent does, and ' ( ) * !
 * too (RFC 3986's reserved characters it leaves): a quote in a queue name must not close the
 * quoted string a template puts it in (Kibana's rison: query:'job:{id}').
 */
const encode = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function expand(template: string, a: LoggedAttempt): string {
  // A running attempt's span ends now: every log system reads a time there ("now" is Kibana's alone).
  const end = a.finishedAt ?? new Date(a.nowMs).toISOString();
  const values: Record<LogUrlField, string> = {
    id: a.jobId,
    attempt: String(a.attempt),
    worker: a.workerId,
    queue: a.queue,
    type: a.type,
    startedAt: a.startedAt,
    finishedAt: end,
    startedMs: String(Date.parse(a.startedAt)),
    finishedMs: String(Date.parse(end)),
  };
  return template.replace(PLACEHOLDER, (whole, f: string) => (isField(f) ? encode(values[f]) : whole));
}

/**
 * The attempt's log link, or null without a template or when the expansion is not an http(s)
 * URL (checked again here: the link is followed from an operator's browser).
 */
export function logUrl(template: string | null | undefined, a: LoggedAttempt): string | null {
  if (!template) return null;
  const out = expand(template, a);
  try {
    const { protocol } = new URL(out);
    return protocol === 'https:' || protocol === 'http:' ? out : null;
  } catch {
    return null;
  }
}
