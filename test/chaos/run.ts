/**
 * npm run chaos — every fault scenario against real processes and servers (a PostgreSQL
 * and a Redis of the suite's own), then one table. Exits non-zero if any scenario fails.
 *   npm run chaos                 all scenarios
 *   npm run chaos -- redis pg     only those whose name contains one of the words
 */
import { runCleanups } from '../cleanup';
import { ChaosEnv } from './env';
import { formatTable, scenarios } from './scenarios';
import type { Row } from './env';

const filters = process.argv.slice(2).map((f) => f.toLowerCase());
const chosen = scenarios.filter((s) => !filters.length || filters.some((f) => s.name.toLowerCase().includes(f)));
const env = await ChaosEnv.start();
const rows: Row[] = [];
const t0 = Date.now();
try {
  for (const s of chosen) {
    const t = Date.now();
    process.stderr.write(`[chaos] ${s.name} ...\n`);
    try {
      rows.push({ ...(await s.run(env)), scenario: s.name });
    } catch (err) {
      rows.push({ scenario: s.name, jobs: 0, completed: 0, lost: 0, claims: 0, duplicates: 0, allowed: 0, recoveryS: null, recoveryBoundS: null, pass: false, notes: String((err as Error).stack ?? err).slice(0, 300) });
    }
    const r = rows.at(-1)!;
    process.stderr.write(`[chaos]   ${r.pass ? 'pass' : 'FAIL'} in ${((Date.now() - t) / 1000).toFixed(1)} s: ${r.notes}\n`);
  }
} finally {
  await env.stop();
  await runCleanups();
}
console.log(formatTable(rows));
console.log(`\n${rows.filter((r) => r.pass).length} of ${rows.length} scenarios pass (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
process.exit(rows.every((r) => r.pass) ? 0 : 1);
