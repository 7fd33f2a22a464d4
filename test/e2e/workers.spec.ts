import { expect, test } from './test';
import { closeDb, db, screenshot } from './helpers';

test.afterAll(closeDb);

test('the workers page lists each process with its heartbeat, flags a stale one, and says which died', async ({ page }) => {
  // A worker that stopped reporting two minutes ago without saying goodbye (its host gone),
  // and one its supervisor saw killed.
  await db().query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at)
     VALUES ('e2e-host:4242:stale', 'e2e-host', 4242, '{default}', 4, now() - interval '10 minutes', now() - interval '2 minutes')
     ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now() - interval '2 minutes', stopped_at = NULL`,
  );
  await db().query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at, stopped_at, exit)
     VALUES ('e2e-host:4343:died', 'e2e-host', 4343, '{default}', 4, now() - interval '10 minutes', now() - interval '3 minutes', now() - interval '3 minutes', 'killed by SIGKILL')
     ON CONFLICT (worker_id) DO NOTHING`,
  );
  const { rows } = await db().query(`SELECT worker_id FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '5 seconds'`);
  expect(rows.length).toBeGreaterThan(0);
  await page.goto('/workers');
  for (const r of rows) {
    await expect(page.getByTestId(`worker-${r.worker_id}`)).toContainText('live');
    // Its memory as of its last heartbeat (a worker process of Node holds tens of MB at least).
    await expect(page.getByTestId(`worker-${r.worker_id}`).getByTestId('worker-rss')).toHaveText(/^[1-9]\d+ MB$/);
  }
  const stale = page.getByTestId('worker-e2e-host:4242:stale');
  await expect(stale).toContainText('stale');
  await expect(stale).toContainText('2 min');
  const died = page.getByTestId('worker-e2e-host:4343:died');
  await expect(died).toContainText('died');
  await expect(died).toContainText('killed by SIGKILL');
  // Its counts are as it last reported them; its jobs (all of them: its running ones have
  // moved on) are one click away.
  await expect(died).toContainText('as last reported');
  await expect(died.getByTestId('worker-jobs')).toHaveAttribute('href', '/jobs?worker=e2e-host%3A4343%3Adied');
  await expect(died.getByTestId('worker-rss')).toHaveText('—', { useInnerText: true });
  await screenshot(page, 'workers');
  await db().query(`DELETE FROM workers WHERE worker_id IN ('e2e-host:4242:stale', 'e2e-host:4343:died')`);
});

test("a waiting job's page says when no live worker can run it: none serves its queue, or none has its handler", async ({ page }) => {
  const { rows: live } = await db().query(`SELECT 1 FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '5 seconds' AND 'default' = ANY(queues)`);
  expect(live.length).toBeGreaterThan(0);
  await page.goto('/workers');
  await expect(page.getByTestId('worker-types').first()).toContainText('demo.noop');
  // Written straight to the table: producers refuse a type no worker has registered.
  const insert = async (queue: string, type: string) =>
    String((await db().query(`INSERT INTO jobs (queue, type, payload) VALUES ($1, $2, '{}') RETURNING job_id`, [queue, type])).rows[0].job_id);
  const nobodysQueue = await insert('e2e-no-worker-serves-this', 'demo.noop');
  const unknownType = await insert('default', 'e2e.not.handled');
  try {
    await page.goto(`/jobs/${nobodysQueue}`);
    await expect(page.getByTestId('waiting-notice')).toContainText('No live worker serves queue e2e-no-worker-serves-this');
    await page.goto(`/jobs/${unknownType}`);
    await expect(page.getByTestId('waiting-notice')).toContainText('handler for e2e.not.handled');
  } finally {
    await db().query('DELETE FROM jobs WHERE job_id = ANY($1::bigint[])', [[nobodysQueue, unknownType]]);
  }
});
