/**
 * A producer process for the chaos suite: enqueues N chaos.work jobs one at a time, each
 * committed, then rung. With LEASEHOLD_FAILPOINTS=after_commit_before_push=kill it dies
 * between the first COMMIT and its RPUSH.
 */
import { createPool } from '../../lib/db/client';
import { createLogger } from '../../lib/log';
import * as ops from '../../lib/queue/ops';
import { RedisDoorbell } from '../../lib/queue/signal';

const n = Number(process.argv[2] ?? 10);
const pool = createPool(process.env.DATABASE_URL!, { max: 2 });
const doorbell = new RedisDoorbell(process.env.REDIS_URL!, process.env.LEASEHOLD_REDIS_PREFIX!, pool, createLogger());
await new Promise((r) => doorbell.redis.once('ready', r));
for (let i = 0; i < n; i++) {
  await ops.jobEnqueue(pool, [{ type: 'chaos.work', queue: 'chaos', payload: { ms: 50 } }], { doorbell });
}
await doorbell.close();
await pool.end();
