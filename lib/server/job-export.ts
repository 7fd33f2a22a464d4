/**
 * The jobs matching the list's filters, as a download (GET /api/jobs/export): the failed jobs
 * of one error group to attach to an incident, last night's cancelled ones for a report.
 *
 * It walks the list's own keyset pages (lib/queue/read.ts listJobs: the same filters, order
 * and bounded scans), so an export costs what paging through the console costs, one page at a
 * time as the client reads (a slow reader holds no more than a page), pinned to the jobs that
 * existed when it began (maxId = the newest id then). It ends at `max` jobs or after
 * EXPORT_BUDGET_MS, and says so in its last line — a download that stops early must not pass
 * for the whole set.
 */
import type { Executor } from '../db/client';
import { listedJobDto } from '../http/dto';
import { toQueueError } from '../http/respond';
import { MAX_EXPORTS_PER_VIEWER } from '../http/schemas';
import { Places } from './places';
import { type Redaction, redactJob } from '../http/redact';
import type { JobFilter } from '../queue/filters';
import { QueueError } from '../queue/errors';
import { type JobPage, listJobs } from '../queue/read';

const PAGE = 200;
/** A download is not a batch job: past this it ends where it got to, saying so. */
export const EXPORT_BUDGET_MS = 60_000;

export type ExportFormat = 'csv' | 'ndjson';

/** The exports running now: whose (the live streams' owner key), and when each ends at the latest. */
const running = new Places();

/**
 * Null when this viewer may start an export; else a 429 and the seconds until the first of
 * theirs has ended at the latest (Retry-After). No owner (sign-in off): not counted.
 */
export function exportRefusal(owner: string | null): { error: QueueError; retryAfterS: number } | null {
  if (owner === null || running.count(owner) < MAX_EXPORTS_PER_VIEWER) return null;
  return {
    error: new QueueError('rate_limited', `you are running ${MAX_EXPORTS_PER_VIEWER} exports on this console already: wait for one to end`),
    retryAfterS: running.retryAfterS(owner),
  };
}

type JobLine = ReturnType<typeof listedJobDto>;

/** The CSV columns, in order, and each one's value. priority came later: last, so a reader of the earlier columns by position keeps working. */
const CSV: [column: string, value: (j: JobLine) => unknown][] = [
  ['id', (j) => j.id],
  ['status', (j) => j.status],
  ['queue', (j) => j.queue],
  ['type', (j) => j.type],
  ['attempt_count', (j) => j.attemptCount],
  ['max_attempts', (j) => j.maxAttempts],
  ['worker_id', (j) => j.workerId],
  ['created_at', (j) => j.createdAt],
  ['run_at', (j) => j.runAt],
  ['started_at', (j) => j.startedAt],
  ['finished_at', (j) => j.finishedAt],
  ['error', (j) => j.error],
  ['payload', (j) => (j.payloadOmitted ? '(too large for a list: GET /api/jobs/:id)' : j.payload)],
  ['priority', (j) => j.priority],
];
const CSV_COLUMNS = CSV.map(([column]) => column);

/**
 * One CSV field (RFC 4180: quoted when it holds a comma, a quote or a line break). Text a
 * spreadsheet would run as a formula (=, +, -, @, a tab or a carriage return first) is
 * prefixed with ' — an error message or a queue name is user text, and an export is opened
 * in a spreadsheet (OWASP, "CSV injection").
 */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'string' ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvRow(j: JobLine): string {
  return CSV.map(([, value]) => csvField(value(j))).join(',') + '\r\n';
}

export interface ExportEnd {
  rows: number;
  complete: boolean;
  /** Why it ended early: `max` jobs written, or the time budget spent. */
  cut: 'max' | 'time' | null;
  /** Where GET /api/jobs?cursor= would go on from, when cut. */
  nextCursor: string | null;
}

function endLine(format: ExportFormat, end: ExportEnd): string {
  if (format === 'ndjson') return JSON.stringify({ export: end }) + '\n';
  if (end.complete) return '';
  // A line no job row can be (ids are digits), one field with no comma to quote: the file
  // says it is not the whole set.
  return csvField(`# cut at ${end.rows} jobs (${end.cut === 'max' ? 'the max asked for' : `${EXPORT_BUDGET_MS / 1000} s`}): more match; narrow the filters or go on from cursor ${end.nextCursor}`) + '\r\n';
}

/**
 * The export as a stream. The first page is read before the stream is returned, so a
 * filter the list refuses, or a database that does not answer, is an error response and
 * not a broken download.
 */
export async function exportJobs(
  db: Executor,
  filter: JobFilter,
  // `request`: the download's, whose signal says its client went away (and whose place it holds).
  o: { format: ExportFormat; max: number; redaction: Redaction; owner?: string | null; request?: Request },
): Promise<ReadableStream<Uint8Array>> {
  const started = performance.now();
  // Counted from here, before the first read (nothing awaited since the route's exportRefusal),
  // until the stream ends, fails, its reader cancels it or the request's client goes away
  // (before the first page was read, the body is never pulled nor cancelled). Its last page
  // may run past the budget by a read's own limit: a few seconds more.
  const done = o.owner ? running.take(o.owner, EXPORT_BUDGET_MS + 5_000, o.request) : () => {};
  // Pages never larger than what is left to write: an export cut at `max` ends on a page's
  // own cursor (the failed list's is a place in its order, not an id).
  const read = (cursor: string | null, left: number, maxId?: string) =>
    listJobs(db, { ...filter, ...(maxId ? { maxId } : {}), limit: Math.min(PAGE, left), ...(cursor ? { cursor } : {}) });
  let page: JobPage;
  try {
    page = await read(null, o.max);
  } catch (err) {
    done();
    throw err;
  }
  // Pinned to the jobs there were when it began: a busy queue cannot make it run for ever.
  const head = page.headId;
  const pin = head && (!filter.maxId || BigInt(filter.maxId) > BigInt(head)) ? head : filter.maxId;
  let rows = 0;
  let ended = false;
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (o.format === 'csv') controller.enqueue(encoder.encode(CSV_COLUMNS.join(',') + '\r\n'));
    },
    async pull(controller) {
      if (ended) return;
      const finish = (end: ExportEnd) => {
        ended = true;
        done();
        const last = endLine(o.format, end);
        if (last) controller.enqueue(encoder.encode(last));
        controller.close();
      };
      try {
        const text = page.jobs
          .map((j) => {
            const line = redactJob(listedJobDto(j), o.redaction);
            return o.format === 'csv' ? csvRow(line) : JSON.stringify(line) + '\n';
          })
          .join('');
        rows += page.jobs.length;
        if (text) controller.enqueue(encoder.encode(text));
        const cursor = page.nextCursor;
        if (!cursor) return finish({ rows, complete: true, cut: null, nextCursor: null });
        if (rows >= o.max) return finish({ rows, complete: false, cut: 'max', nextCursor: cursor });
        if (performance.now() - started > EXPORT_BUDGET_MS || o.request?.signal.aborted) return finish({ rows, complete: false, cut: 'time', nextCursor: cursor });
        page = await read(cursor, o.max - rows, pin ?? undefined);
      } catch (err) {
        // Headers are gone: the body's last line says the export failed, never a quiet end.
        ended = true;
        done();
        // Said as a route says an error (toQueueError: a known one in its own words, anything
        // else logged and told as an internal error), not the raw message of whatever threw.
        const why = toQueueError(err, { readOnly: true }).message;
        controller.enqueue(encoder.encode(o.format === 'ndjson' ? JSON.stringify({ export: { rows, complete: false, error: why } }) + '\n' : csvField(`# export failed after ${rows} jobs: ${why}`) + '\r\n'));
        controller.close();
      }
    },
    // The reader went away (the download cancelled, the connection closed).
    cancel() {
      ended = true;
      done();
    },
  });
}
