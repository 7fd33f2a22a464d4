/**
 * npm run bench — Leasehold through the shared harness's workloads (../shared/bench),
 * printing one JSON line per workload in the harness's format.
 *
 *   npm run bench                      throughput (N=20000 demo no-op jobs, P=2, C=10) and latency
 *   WORKLOADS=throughput npm run bench
 *   N=5000 C=10 P=2 npm run bench
 *
 * It copies the harness next to this project's node_modules (so its `pg` and `ioredis`
 * resolve) and runs bench/peer.mjs the way run.sh runs an extra peer. For the side-by-side
 * table with graphile-worker and BullMQ, run the shared harness itself (see README).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.env.BENCH_SHARED ?? path.resolve(root, '../shared/bench');
const source = path.join(shared, 'lib/harness.mjs');
if (!fs.existsSync(source)) {
  console.error(`the shared benchmark harness is not at ${source} (set BENCH_SHARED to its folder)`);
  process.exit(2);
}
const copy = path.join(root, 'bench/.harness/lib/harness.mjs');
fs.mkdirSync(path.dirname(copy), { recursive: true });
fs.copyFileSync(source, copy);

const workloads = (process.env.WORKLOADS ?? 'throughput latency').split(/\s+/).filter(Boolean);
let failed = false;
for (const workload of workloads) {
  const r = spawnSync(process.execPath, [path.join(root, 'bench/peer.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      WORKLOAD: workload,
      BENCH_HARNESS: copy,
      BENCH_RUN_ID: process.env.BENCH_RUN_ID ?? `lh${Date.now().toString(36).slice(-6)}`,
      LEASEHOLD_LOG: process.env.LEASEHOLD_LOG ?? 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const line = r.stdout.split('\n').filter((l) => l.startsWith('{')).pop();
  console.log(line ?? JSON.stringify({ system: 'leasehold', workload, error: `no JSON line (exit ${r.status})` }));
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
