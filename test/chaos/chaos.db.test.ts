/**
 * The chaos suite inside npm test: every scenario of `npm run chaos` as a test, against
 * real processes and a PostgreSQL and Redis of the suite's own; the table at the end.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ChaosEnv, type Row } from './env';
import { formatTable, scenarios } from './scenarios';

let env: ChaosEnv;
const rows: Row[] = [];

before(async () => {
  env = await ChaosEnv.start();
});
after(async () => {
  await env?.stop();
  if (rows.length) console.log(`\n${formatTable(rows)}\n\n${rows.map((r) => `- ${r.scenario}: ${r.notes}`).join('\n')}\n`);
});

for (const s of scenarios) {
  test(s.name, { timeout: 300_000 }, async () => {
    const row = { ...(await s.run(env)), scenario: s.name };
    rows.push(row);
    assert.ok(row.pass, `${s.name}: ${JSON.stringify(row)}`);
  });
}
