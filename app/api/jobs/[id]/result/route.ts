import { noQuery, parseJobId, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { QueueError } from '@/lib/queue/errors';
import { getJob } from '@/lib/queue/read';
import { redactJsonText } from '@/lib/http/redact';
import { redactionOf } from '@/lib/server/console-reads';
import { serverContext } from '@/lib/server/context';

/** GET /api/jobs/:id/result — the completed job's result, as the handler returned it (JSON). */
export const GET = route('viewer', async (req: Request, ctx: { params: Promise<{ id: string }> }, who) => {
  noQuery(req);
  const id = parseJobId((await ctx.params).id);
  const { readPool, results } = serverContext();
  const detail = await getJob(readPool, id);
  if (!detail) throw new QueueError('not_found', `no job with id ${id}`);
  const key = detail.job.resultKey;
  if (!key) throw new QueueError('not_found', `job ${id} has no result (status ${detail.job.status})`);
  const stored = await results.get(key);
  if (!stored) throw new QueueError('not_found', `the result of job ${id} is missing from the result store`);
  const redaction = redactionOf(who);
  // Redacted, the result is JSON text again (its numbers as written); the bytes are the handler's otherwise.
  const body = redaction && /json/i.test(stored.contentType) ? Buffer.from(redactJsonText(stored.body.toString('utf8'), redaction)) : stored.body;
  return new Response(new Uint8Array(body), {
    headers: {
      'content-type': `${stored.contentType}; charset=utf-8`,
      'content-disposition': `inline; filename="job-${id}-result.json"`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
