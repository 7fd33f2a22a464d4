import { json, MAX_ENQUEUE_BODY_BYTES, readJson, readListQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { pageDto } from '@/lib/http/dto';
import { checkFilterRedaction, redactJobs } from '@/lib/http/redact';
import { listQuery, parseEnqueueRequest, toEnqueueInput } from '@/lib/http/schemas';
import { allows } from '@/lib/auth/roles';
import { knownJobTypes, operatorOnlyWhy } from '@/lib/job-types';
import { QueueError } from '@/lib/queue/errors';
import { jobEnqueue } from '@/lib/queue/ops';
import { agedBy, listJobs } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';
import { redactionOf } from '@/lib/server/console-reads';
import { readCache } from '@/lib/server/read-cache';

/**
 * GET /api/jobs?status=&queue=&type=&worker=&q=&cursor=&limit=&fresh= — newest first, keyset
 * pages; one read a second per distinct page, shared by every viewer (lib/server/read-cache.ts),
 * unless `fresh=1` asks for a read of its own. A parameter given empty filters nothing.
 */
export const GET = route('viewer', async (req: Request, _ctx, who) => {
  const { fresh, ...filters } = listQuery.parse(readListQuery(req, Object.keys(listQuery.shape)));
  const redaction = redactionOf(who);
  checkFilterRedaction(filters, redaction);
  const { readPool } = serverContext();
  const { value: page, ageMs } = await readCache.get(`jobs ${JSON.stringify(filters)}`, () => listJobs(readPool, filters), { fresh: !!fresh });
  // The page carries the database clock and the leases left: moved on by the answer's age.
  const dto = pageDto(agedBy(page, ageMs));
  return json({ ...dto, jobs: redactJobs(dto.jobs, redaction) });
});

/**
 * POST /api/jobs — enqueue one job (an object) or many (an array). Answers 202 only
 * after the INSERT has committed; the doorbell rings after that.
 */
export const POST = route('enqueue', async (req: Request, _ctx, who) => {
  const body = parseEnqueueRequest(await readJson(req, MAX_ENQUEUE_BODY_BYTES));
  const many = Array.isArray(body);
  const { pool, doorbell } = serverContext();
  const types = await knownJobTypes(pool, many ? body.map((b) => b.type) : [body.type]);
  const inputs = many ? body.map((b, k) => toEnqueueInput(b, `[${k}]`, types)) : [toEnqueueInput(body, '', types)];
  if (!allows(who, 'operator')) {
    inputs.forEach((input, k) => {
      const why = operatorOnlyWhy(input.type, input.payload as Record<string, unknown>);
      if (why) throw new QueueError('forbidden', `${many ? `[${k}].` : ''}payload: ${why}: enqueuing it needs the operator role, not an enqueue token`);
    });
  }
  const results = await jobEnqueue(pool, inputs, { doorbell });
  const answer = (r: (typeof results)[number]) => ({ id: r.id, created: r.created, ...(r.heldBy ? { heldBy: r.heldBy } : {}) });
  if (many) return json({ jobs: results.map(answer) }, 202);
  return json(answer(results[0]!), 202);
});

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
