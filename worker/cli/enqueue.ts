/**
 * `leasehold enqueue` — one job from the arguments, or many from a JSON-lines file or
 * stdin (one POST /api/jobs body per line), validated line by line exactly as the API
 * validates, and inserted in batches of up to 1000 rows per statement.
 */
import fs from 'node:fs';
import { type Command, Option } from 'commander';
import { MAX_BULK_ENQUEUE } from '../../lib/http/schemas';
import { validateJob } from '../../lib/client';
import { builtinJobTypes, type KnownJobTypes } from '../../lib/job-types';
import { QueueError } from '../../lib/queue/errors';
import { PRIORITY_LEVELS } from '../../lib/queue/job';
import { type EnqueueInput, type EnqueueResult, jobEnqueue } from '../../lib/queue/ops';
import type { Doorbell, Ring } from '../../lib/queue/signal';
import { underflowingNumber, underflowText } from '../../lib/queue/text';
import {
  EXIT,
  EXIT_CODES_HELP,
  exitAtLeast,
  intArg,
  jobTypesFrom,
  jsonArg,
  lazyDatabase,
  namedByFlag,
  printJson,
  progressBar,
  progressEnabled,
  visible,
  withQueue,
} from './common';

/** At most this many refused lines are printed one by one; the summary counts them all. */
const MAX_PRINTED_ERRORS = 100;

interface EnqueueOptions {
  file?: string;
  queue?: string;
  maxAttempts?: number;
  priority?: number;
  runAt?: string;
  idempotencyKey?: string;
  singletonKey?: string;
  dryRun?: boolean;
  allOrNothing?: boolean;
  batchSize: number;
  progress?: boolean;
  json?: boolean;
}

/** A single job's fields are flags here: the error names the flag typed (`--run-at`), not the API's field (`runAt`). */
const FLAG_OF: Record<string, string> = {
  idempotencyKey: '--idempotency-key',
  maxAttempts: '--max-attempts',
  priority: '--priority',
  queue: '--queue',
  runAt: '--run-at',
  singletonKey: '--singleton-key',
};

function asFlags<T>(validate: () => T): T {
  try {
    return validate();
  } catch (e) {
    if (e instanceof QueueError) throw new QueueError(e.code, namedByFlag(e.message, FLAG_OF), e.details);
    throw e;
  }
}

export function addEnqueueCommand(program: Command) {
  program
    .command('enqueue')
    .summary('enqueue one job, or many from a JSON-lines file or stdin')
    .description(
      'Enqueue one job from the arguments, or many from a JSON-lines file (--file path, or --file - for stdin): one ' +
        'JSON object per line, each in the shape of a POST /api/jobs body:\n' +
        '  {"type": "demo.sleep", "payload": {"ms": 100}, "queue": "mail"}\n' +
        '  {"type": "demo.noop", "maxAttempts": 5, "idempotencyKey": "order-42"}\n' +
        'Every line is validated as the API validates it; a line that fails is reported with its line number and ' +
        'nothing is written for it (with --all-or-nothing, nothing is written at all). Valid lines are inserted in ' +
        'batches of up to 1000 rows per statement; workers are rung after each batch commits.',
    )
    .argument('[type]', 'job type of a single job, e.g. demo.sleep')
    .argument('[payload]', 'payload of a single job, as JSON', jsonArg('payload'))
    .option('-f, --file <path>', 'JSON-lines file of jobs ("-" reads stdin)')
    .option('-q, --queue <name>', 'queue (with --file: for lines that name none)')
    .option('--max-attempts <n>', 'attempts before the dead letter (with --file: for lines that give none)', intArg(1, 100))
    .option('--priority <n>', '0 (the default: runs first) to 9 (runs last) (with --file: for lines that give none)', intArg(0, PRIORITY_LEVELS - 1))
    .option('--run-at <iso>', 'when a single job becomes due (ISO 8601 with a zone)')
    .option('--idempotency-key <key>', 'a second enqueue with the same key returns the first job')
    .option('--singleton-key <key>', 'while a job with this key is queued, retrying or running, return it instead of a new one')
    .option('--dry-run', 'validate only: report what would be refused, write nothing')
    .option('--all-or-nothing', 'with --file: one transaction; any invalid line and nothing is written')
    .addOption(new Option('--batch-size <n>', 'rows per INSERT statement').argParser(intArg(1, MAX_BULK_ENQUEUE)).default(MAX_BULK_ENQUEUE))
    .option('--progress', 'show a progress bar on stderr even when it is not a terminal')
    .option('--no-progress', 'never show a progress bar')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Examples:
  leasehold enqueue demo.sleep '{"ms": 500}' --queue default
  leasehold enqueue --file jobs.jsonl
  generate-jobs | leasehold enqueue --file - --queue imports --json
${EXIT_CODES_HELP}
  With --file: 1 when some lines were refused and the rest enqueued; 2 when
  nothing was written because of invalid input (every line refused,
  --all-or-nothing with a refused line, or a refused line in --dry-run).`,
    )
    .action(async (type: string | undefined, payload: unknown, o: EnqueueOptions) => {
      if (o.file !== undefined) {
        if (type !== undefined) throw new QueueError('invalid_request', 'give either a job type or --file, not both');
        // Given at all, even empty: an empty key is still a flag the file's jobs would not get.
        if (o.runAt !== undefined || o.idempotencyKey !== undefined || o.singletonKey !== undefined)
          throw new QueueError('invalid_request', '--run-at, --idempotency-key and --singleton-key are per job: put them in the lines of the file');
        return enqueueFile(o);
      }
      if (type === undefined) throw new QueueError('invalid_request', 'give a job type (leasehold enqueue demo.noop) or --file');
      if (o.allOrNothing) throw new QueueError('invalid_request', '--all-or-nothing applies to --file');
      const job = { type, payload, queue: o.queue, maxAttempts: o.maxAttempts, priority: o.priority, runAt: o.runAt, idempotencyKey: o.idempotencyKey, singletonKey: o.singletonKey };
      // A built-in type is checked before the database is opened; another needs the registry.
      if (builtinJobTypes.payloadOf(type)) asFlags(() => validateJob(job));
      if (o.dryRun) {
        const db = lazyDatabase();
        try {
          const types = await jobTypesFrom(db.get)(type);
          asFlags(() => validateJob(job, '', types));
        } finally {
          await db.close();
        }
        return o.json ? printJson({ valid: true }) : console.log('valid (dry run: nothing written)');
      }
      const [r] = await withQueue(async ({ pool, doorbell }) => {
        const types = await jobTypesFrom(async () => pool)(type);
        const input = asFlags(() => validateJob(job, '', types));
        return jobEnqueue(pool, [input], { doorbell });
      });
      if (o.json) return printJson(r);
      console.log(`${r!.id}${r!.created ? '' : `\t(an existing job for this ${r!.heldBy === 'singletonKey' ? 'singleton' : 'idempotency'} key)`}`);
    });
}

interface Refusal {
  line: number;
  error: string;
}

interface Summary {
  lines: number;
  jobs: number;
  enqueued: number;
  existing: number;
  refused: number;
  refusedLines: Refusal[];
  written: boolean;
  dryRun: boolean;
}

/**
 * The input's lines (ended by \n, \r\n or a lone \r, as readline ends them), each decoded
 * strictly: a line that is not valid UTF-8 comes as null, to be refused as the API refuses
 * such a body. A lenient decode (readline's) turns each bad byte into U+FFFD, so two lines
 * whose idempotency keys differ in one Latin-1 byte would be stored, and deduplicated, as one.
 * A byte-order mark is kept (the caller drops the first line's).
 */
export async function* utf8Lines(input: AsyncIterable<Buffer | string>): AsyncGenerator<string | null> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  function* decode(b: Buffer): Generator<string | null> {
    let text: string;
    try {
      text = decoder.decode(b);
    } catch {
      yield null;
      return;
    }
    yield* (text.endsWith('\r') ? text.slice(0, -1) : text).split('\r');
  }
  let pieces: Buffer[] = []; // the line read so far, across chunks
  for await (const chunk of input) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      const head = buf.subarray(start, nl);
      yield* decode(pieces.length ? Buffer.concat([...pieces, head]) : head);
      pieces = [];
      start = nl + 1;
    }
    if (start < buf.length) pieces.push(buf.subarray(start));
  }
  if (pieces.length) yield* decode(Buffer.concat(pieces));
}

/** One line → the job it describes, or why not. */
async function parseLine(
  text: string,
  lineNo: number,
  o: EnqueueOptions,
  typesFor: (name: unknown) => Promise<KnownJobTypes>,
): Promise<EnqueueInput | Refusal> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { line: lineNo, error: `not valid JSON (${(e as Error).message})` };
  }
  const tiny = underflowingNumber(text);
  if (tiny) return { line: lineNo, error: underflowText(tiny) };
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { line: lineNo, error: 'expected a JSON object (one job per line)' };
  const job = v as Record<string, unknown>;
  try {
    return validateJob(
      {
        ...(job as { type: string }),
        // The command line's defaults stand in for a field the line leaves out, not for a null
        // it gives (refused, as the API refuses it).
        queue: 'queue' in job ? (job.queue as string) : o.queue,
        maxAttempts: 'maxAttempts' in job ? (job.maxAttempts as number) : o.maxAttempts,
        priority: 'priority' in job ? (job.priority as number) : o.priority,
      },
      '',
      await typesFor(job.type),
    );
  } catch (e) {
    if (e instanceof QueueError) return { line: lineNo, error: e.message };
    throw e;
  }
}

async function enqueueFile(o: EnqueueOptions) {
  const fromStdin = o.file === '-';
  let total: number | null = null;
  let input: NodeJS.ReadableStream & { bytesRead?: number };
  if (fromStdin) {
    input = process.stdin;
  } else {
    let st: fs.Stats;
    try {
      st = fs.statSync(o.file!);
    } catch (e) {
      throw new QueueError('invalid_request', `cannot read ${o.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    // Checked before anything is read or written: a directory would fail at the first read,
    // after the database was opened. A pipe (--file <(generate-jobs)) is read like stdin.
    if (st.isFIFO()) total = null;
    else if (st.isFile()) total = st.size;
    else throw new QueueError('invalid_request', `cannot read ${o.file}: not a file${st.isDirectory() ? ' (a directory)' : ''}; give a JSON-lines file, or - for stdin`);
    input = fs.createReadStream(o.file!);
  }
  const progress = progressBar(progressEnabled(o.progress), {
    label: o.dryRun ? 'checking' : 'enqueueing',
    total,
    format:
      total === null
        ? `${o.dryRun ? 'checked' : 'enqueued'} {jobs} jobs | line {line} | {duration_formatted}`
        : `${o.dryRun ? 'checking' : 'enqueueing'} [{bar}] {percentage}% | {jobs} jobs | line {line} | ETA {eta_formatted}`,
    payload: { jobs: 0, line: 0 },
  });
  // Bytes read so far (files only: the bar's measure). Nothing may read the stream before
  // the line reader is attached, or the lines would be lost.
  const bytes = () => (input as fs.ReadStream).bytesRead ?? 0;

  const s: Summary = { lines: 0, jobs: 0, enqueued: 0, existing: 0, refused: 0, refusedLines: [], written: false, dryRun: !!o.dryRun };
  const refuse = (r: Refusal) => {
    s.refused++;
    if (s.refusedLines.length < 10_000) s.refusedLines.push(r);
    if (!o.json && s.refused <= MAX_PRINTED_ERRORS) console.error(`line ${r.line}: ${visible(r.error)}`);
  };
  const tally = (rs: EnqueueResult[]) => {
    for (const r of rs) r.created ? s.enqueued++ : s.existing++;
  };

  const run = async (insert: ((batch: EnqueueInput[]) => Promise<void>) | null, typesFor: (name: unknown) => Promise<KnownJobTypes>) => {
    let batch: EnqueueInput[] = [];
    try {
      for await (let text of utf8Lines(input)) {
        s.lines++;
        if (text === null) {
          refuse({ line: s.lines, error: 'not valid UTF-8: send the file in UTF-8' });
          continue;
        }
        // Files saved by Windows tools start with a byte-order mark: not part of the first job.
        if (s.lines === 1 && text.startsWith('\ufeff')) text = text.slice(1);
        if (!text.trim()) continue;
        const r = await parseLine(text, s.lines, o, typesFor);
        if ('error' in r) refuse(r);
        else {
          s.jobs++;
          batch.push(r);
        }
        if (batch.length >= o.batchSize) {
          if (insert) await insert(batch);
          batch = [];
        }
        progress.update(total === null ? s.jobs : bytes(), { jobs: s.jobs, line: s.lines });
      }
      if (batch.length && insert) await insert(batch);
      progress.update(total === null ? s.jobs : total, { jobs: s.jobs, line: s.lines });
    } finally {
      progress.stop();
    }
  };

  if (o.dryRun) {
    const db = lazyDatabase();
    try {
      await run(null, jobTypesFrom(db.get));
    } finally {
      await db.close();
    }
  } else {
    await withQueue(async ({ pool, doorbell }) => {
      if (!o.allOrNothing) {
        // Each batch commits on its own and is rung at once: a crash half-way keeps what
        // was committed (idempotency keys make a re-run safe).
        try {
          await run(async (batch) => {
            tally(await jobEnqueue(pool, batch, { doorbell }));
            s.written = true;
          }, jobTypesFrom(async () => pool));
        } catch (err) {
          console.error(`stopped at line ${s.lines}: ${s.enqueued} job(s) were enqueued before the error (re-running is safe for lines with an idempotencyKey)`);
          throw err;
        }
        return;
      }
      const client = await pool.connect();
      const deferred: Ring[] = [];
      const collect: Doorbell = { usingRedis: false, ring: async (items) => void deferred.push(...items), backlog: async () => null };
      try {
        await client.query('BEGIN');
        // The registry is read through the pool, not inside this transaction.
        await run(async (batch) => tally(await jobEnqueue(client, batch, { doorbell: collect })), jobTypesFrom(async () => pool));
        if (s.refused > 0) {
          await client.query('ROLLBACK');
          s.enqueued = s.existing = 0;
          return;
        }
        await client.query('COMMIT');
        s.written = s.jobs > 0;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
      for (let k = 0; k < deferred.length; k += MAX_BULK_ENQUEUE) await doorbell.ring(deferred.slice(k, k + MAX_BULK_ENQUEUE));
    });
  }

  if (s.refused > 0) exitAtLeast(s.written ? EXIT.refused : EXIT.usage);
  if (o.json) {
    printJson(s);
    return;
  }
  if (s.refused > MAX_PRINTED_ERRORS) console.error(`… and ${s.refused - MAX_PRINTED_ERRORS} more refused lines`);
  const refusedText = s.refused ? `; refused ${s.refused} line(s)${s.refusedLines.length <= 20 ? ': ' + s.refusedLines.map((r) => r.line).join(', ') : ''}` : '';
  if (o.dryRun) console.log(`dry run: ${s.jobs} valid job(s) in ${s.lines} line(s)${refusedText}; nothing written`);
  else if (o.allOrNothing && s.refused) console.log(`nothing written (--all-or-nothing): ${s.jobs} valid job(s) in ${s.lines} line(s)${refusedText}`);
  else console.log(`enqueued ${s.enqueued} job(s)${s.existing ? `, ${s.existing} already there (a job with the same idempotency key, or an unfinished one with the same singleton key)` : ''} from ${s.lines} line(s)${refusedText}`);
}
