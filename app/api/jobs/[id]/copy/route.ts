import { actorOf, audited } from '@/lib/audit/log';
import { errorResponse, json, MAX_ENQUEUE_BODY_BYTES, parseJobId, readJson, route } from '@/lib/http/respond';
import { copyBody, toEnqueueInput } from '@/lib/http/schemas';
import { otherMethods } from '@/lib/http/unrouted';
import { knownJobTypes } from '@/lib/job-types';
import { QueueError } from '@/lib/queue/errors';
import { jobEnqueue, singletonRefusal } from '@/lib/queue/ops';
import { getJob } from '@/lib/queue/read';
import { serverContext } from '@/lib/server/context';

/**
 * POST /api/jobs/:id/copy {payload?, queue?, maxAttempts?, runAt?, reason?} — enqueue a new
 * job of job :id's type: what an operator does with a dead job whose input was wrong (mend
 * the payload, run it again) without rewriting the original, whose history stays as it ran.
 * Left out, the payload, queue, attempts and priority are the original's (its enqueued attempts, not
 * what requeues raised them to), due now. The singleton key is kept: while a job holds it (the
 * original too, if unfinished), the copy is refused (409) rather than two of its kind running
 * at once. The copy is checked as POST /api/jobs checks a job
 * (its type's payload schema included). Operator or admin; one audit entry (`copy`) on both
 * jobs, so each one's timeline links to the other. 202 {id, created, copyOf}.
 */
export const POST = route('operator', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  const id = parseJobId((await ctx.params).id);
  const body = copyBody.parse(await readJson(req, MAX_ENQUEUE_BODY_BYTES, true));
  const { pool, doorbell } = serverContext();
  const original = await getJob(pool, id, { payload: body.payload === undefined });
  if (!original) throw new QueueError('not_found', `no job with id ${id}`);
  const { job } = original;
  const input = toEnqueueInput(
    {
      type: job.type,
      queue: body.queue ?? job.queue,
      payload: body.payload === undefined ? job.payload : body.payload,
      maxAttempts: body.maxAttempts ?? job.attemptBudget,
      priority: body.priority ?? job.priority,
      runAt: body.runAt ?? null,
    },
    '',
    await knownJobTypes(pool, [job.type]),
  );
  input.singletonKey = job.singletonKey;
  const refusal = (holder: string) => singletonRefusal(holder, job.singletonKey, 'copy', holder === id);
  const [made] = await audited(
    pool,
    actorOf(who),
    { action: 'copy', target: { ids: [id] }, jobIds: [id], reason: body.reason, details: { queue: input.queue, priority: input.priority, payloadChanged: body.payload !== undefined } },
    () => jobEnqueue(pool, [input], { doorbell }),
    // Refused by the key's holder (made: that job): the job's state forbade it, logged as a
    // skipped attempt as a refused requeue is, with who holds the key.
    ([r]) =>
      r!.created
        ? { changed: 1, skipped: 0, jobIds: [id, r!.id], details: { copy: r!.id } }
        : { changed: 0, skipped: 1, details: { refused: refusal(r!.id), heldBy: r!.id } },
  );
  if (!made!.created) return errorResponse(new QueueError('state_forbids', refusal(made!.id)));
  return json({ id: made!.id, created: true, copyOf: id }, 202);
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods('POST');
