/** Queue controls from the console: pause and resume (POST /api/queues/:name). */
import { api } from './client';

export const setQueuePaused = (queue: string, paused: boolean, reason?: string) =>
  api<{ queue: string; controls: unknown }>(`/api/queues/${encodeURIComponent(queue)}`, { method: 'POST', json: { paused, ...(reason ? { reason } : {}) } });
