import { consoleInfoDto } from '@/lib/http/dto';
import { json, noQuery, route } from '@/lib/http/respond';
import { otherMethods } from '@/lib/http/unrouted';
import { allJobTypeNames } from '@/lib/job-types';
import { serverContext } from '@/lib/server/context';
import pkg from '@/package.json';

/** GET /api/console — what the console shows about its own installation (environment badge, lease settings, signal). */
export const GET = route('viewer', async (req: Request) => {
  noQuery(req);
  const { cfg, doorbell, readPool } = serverContext();
  const jobTypes = await allJobTypeNames(readPool);
  return json(consoleInfoDto(cfg, { environment: process.env.LEASEHOLD_ENV?.trim() || null, redis: doorbell.usingRedis, version: pkg.version, jobTypes }));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET');
