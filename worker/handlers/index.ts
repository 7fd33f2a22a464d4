/** Job type → handler. Every type in lib/job-types.ts has a handler here (a test checks). */
import type { JobTypeName } from '../../lib/job-types';
import { demoNoop, demoSleep } from './demo';
import type { Handler } from './types';

export const handlers: Record<JobTypeName, Handler> = {
  'demo.noop': demoNoop,
  'demo.sleep': demoSleep,
};

export type { Handler, JobContext } from './types';
