/**
 * A LEASEHOLD_HANDLERS module of job types that are not built in (lib/job-types.db.test.ts):
 * one declared with a payload schema and a description, one with a time limit of its own,
 * one only as a handler (any JSON object as payload).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Handler, JobTypeDeclaration } from '../../lib/client';

export const handlers: Record<string, Handler> = {
  'email.send': async (payload: { to: string }) => ({ sentTo: payload.to }),
  'email.slow': async (_payload, ctx) => {
    await sleep(30_000, undefined, { signal: ctx.signal });
  },
  'report.build': async () => ({ built: true }),
};

export const jobTypes = {
  'email.send': {
    description: 'Sends one email.',
    payload: z.object({ to: z.string().email(), subject: z.string().max(200).optional() }),
  },
  'email.slow': { timeoutMs: 300 },
} satisfies Record<string, JobTypeDeclaration>; // the package's type for a module's declarations
