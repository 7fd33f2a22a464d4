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
  // Its jobs in hand when it died, as their lost leases recorded them (on a queue no worker serves).
  const { rows: lost } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, lease_lost_streak)
     SELECT 'e2e-died-in-hand', 'demo.noop', 'retrying', '{}', 1, 5, 5, s FROM unnest(ARRAY[1, 1, 1, 1, 1, 2]) WITH ORDINALITY AS t(s, k) ORDER BY k
     RETURNING job_id::text AS id`,
  );
  // Six in hand, the likely poison the last by id: it is named first all the same.
  const ids = lost.map((r) => r.id as string);
  const poison = ids.at(-1)!;
  await db().query(
    `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome)
     SELECT unnest($1::bigint[]), 1, 'e2e-host:4343:died', now(), now(), 'lease_lost'`,
    [ids],
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
  // The jobs it had in hand (their lost leases), the suspect among them marked: the likely poison.
  await expect(died.getByTestId('worker-lost-jobs')).toHaveText(`in hand: #${poison} (suspect), ${ids.slice(0, 4).map((id) => `#${id}`).join(', ')}, +1 more`);
  await expect(died.getByTestId('worker-lost-more')).toHaveAttribute('href', '/jobs?worker=e2e-host%3A4343%3Adied');
  await expect(died.getByTestId('worker-lost-jobs').getByRole('link', { name: `#${poison}` })).toHaveAttribute('href', `/jobs/${poison}`);
  await expect(died.getByTestId('worker-rss')).toHaveText('—', { useInnerText: true });
  await screenshot(page, 'workers');
  await db().query(`DELETE FROM workers WHERE worker_id IN ('e2e-host:4242:stale', 'e2e-host:4343:died')`);
  await db().query('DELETE FROM ended_attempts WHERE job_id = ANY($1::bigint[])', [ids]);
  await db().query('DELETE FROM jobs WHERE job_id = ANY($1::bigint[])', [ids]);
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
    // Its queue's list says so too (from the shared stats, read again every 15 s).
    await page.goto('/jobs?queue=e2e-no-worker-serves-this');
    await expect(page.getByTestId('queue-notice')).toContainText('No live worker consumes queue e2e-no-worker-serves-this', { timeout: 40_000 });
    await expect(page.getByTestId('matching-count')).toHaveText('1 job matches');
    // Paused as well: the notice says the pause, and that a resume alone would run nothing.
    await db().query(`INSERT INTO queues (name, paused_at) VALUES ('e2e-no-worker-serves-this', now())`);
    await expect(page.getByTestId('queue-notice')).toContainText('is paused', { timeout: 40_000 });
    await expect(page.getByTestId('queue-notice')).toContainText('no live worker consumes it, so a resume alone runs nothing');
    await page.goto('/jobs?queue=default');
    await expect(page.getByTestId(`job-row-${unknownType}`)).toBeVisible();
    // The count needs the stats the notice reads: once it shows, a notice would have too.
    await expect(page.getByTestId('matching-count')).toBeVisible();
    await expect(page.getByTestId('queue-notice')).toHaveCount(0);
  } finally {
    await db().query('DELETE FROM jobs WHERE job_id = ANY($1::bigint[])', [[nobodysQueue, unknownType]]);
    await db().query(`DELETE FROM queues WHERE name = 'e2e-no-worker-serves-this'`);
  }
});

test('a worker quieted from its row claims no new job while the other runs them, and claims again once resumed', async ({ page, request }) => {
  test.setTimeout(90_000);
  const { rows } = await db().query(
    `SELECT worker_id FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '5 seconds' AND worker_id NOT LIKE 'e2e-host:%' ORDER BY worker_id`,
  );
  expect(rows.length).toBeGreaterThanOrEqual(2);
  const quieted: string = rows[0].worker_id;
  const row = page.getByTestId(`worker-${quieted}`);
  await page.goto('/workers');
  try {
    await row.getByTestId('worker-quiet-button').click();
    // It asks first, with a reason for the audit log.
    const dialog = page.getByTestId('confirm-dialog');
    await dialog.getByRole('textbox').fill('e2e: before a deploy');
    await dialog.getByTestId('confirm-action').click();
    await expect(dialog).toHaveCount(0);
    // "quieting…" until the process reads the request with a heartbeat (every second here), then "quiet".
    await expect(row.getByTestId('worker-quiet')).toHaveText('quiet', { timeout: 20_000 });
    await screenshot(page, 'workers-quiet');
    const res = await request.post('/api/jobs', { data: Array.from({ length: 12 }, () => ({ type: 'demo.noop' })) });
    expect(res.status()).toBe(202);
    const ids = ((await res.json()).jobs as { id: string }[]).map((j) => j.id);
    await expect
      .poll(async () => (await db().query(`SELECT count(*)::int AS n FROM jobs WHERE job_id = ANY($1::bigint[]) AND status = 'completed'`, [ids])).rows[0].n, { timeout: 30_000 })
      .toBe(12);
    const { rows: by } = await db().query(`SELECT DISTINCT worker_id FROM jobs WHERE job_id = ANY($1::bigint[])`, [ids]);
    expect(by.map((r) => r.worker_id)).not.toContain(quieted);
    const { rows: audit } = await db().query(`SELECT action, reason FROM audit_log WHERE action = 'worker.quiet' AND target->>'worker' = $1`, [quieted]);
    expect(audit).toEqual([{ action: 'worker.quiet', reason: 'e2e: before a deploy' }]);
    await row.getByTestId('worker-quiet-button').click();
    await expect(row).toContainText('live');
    await expect(row.getByTestId('worker-quiet')).toHaveCount(0);
  } finally {
    await request.post(`/api/workers/${encodeURIComponent(quieted)}/resume`);
  }
});

test("Quiet warns when the worker is the last live one claiming from a queue, and not when another serves it", async ({ page }) => {
  await db().query(
    // A process that reads quiet requests reports `quiet` with its heartbeat (the button is off otherwise).
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at, metrics)
     VALUES ('e2e-host:4545:alone', 'e2e-host', 4545, '{default,e2e-only-here}', 2, now(), now() + interval '1 minute', '{"quiet": false}')
     ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = now() + interval '1 minute', stopped_at = NULL`,
  );
  try {
    await page.goto('/workers');
    await page.getByTestId('worker-e2e-host:4545:alone').getByTestId('worker-quiet-button').click();
    const dialog = page.getByTestId('confirm-dialog');
    await expect(dialog.getByTestId('quiet-last-consumer')).toHaveText(
      'No other live worker claims from queue e2e-only-here: its jobs will wait until this worker is resumed or another one starts.',
    );
    await dialog.getByRole('button', { name: 'Back' }).click();
    await expect(dialog).toHaveCount(0);
    // A real worker on default, which the other (and this row) also serve: no warning.
    const { rows } = await db().query(`SELECT worker_id FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '5 seconds' AND worker_id NOT LIKE 'e2e-host:%' ORDER BY worker_id LIMIT 1`);
    await page.getByTestId(`worker-${rows[0].worker_id}`).getByTestId('worker-quiet-button').click();
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId('quiet-last-consumer')).toHaveCount(0);
    await dialog.getByRole('button', { name: 'Back' }).click();
  } finally {
    await db().query(`DELETE FROM workers WHERE worker_id = 'e2e-host:4545:alone'`);
  }
});

test('a week of crash-looping incarnations: the page lists the live ones and the latest ended, and says how many it leaves out', async ({ page }) => {
  // More ended rows than a read lists (WORKERS_LISTED), as a process restarted every few seconds leaves.
  await db().query(
    `INSERT INTO workers (worker_id, host, pid, queues, concurrency, started_at, heartbeat_at, stopped_at, exit)
     SELECT 'e2e-crashloop:' || g, 'e2e-crashloop', g, '{e2e-crashloop}', 1, now() - g * interval '1 min' - interval '5 s', now() - g * interval '1 min', now() - g * interval '1 min', 'exited with code 1'
       FROM generate_series(1, 520) g ON CONFLICT (worker_id) DO NOTHING`,
  );
  try {
    const total = Number((await db().query(`SELECT count(*) AS n FROM workers`)).rows[0].n);
    await page.goto('/workers');
    await expect(page.getByTestId('workers-left-out')).toHaveText(
      new RegExp(`^The first 500 of ${total.toLocaleString('en')} worker processes on file are listed: .* The other ${(total - 500).toLocaleString('en')} are left out`),
    );
    // The live ones lead the list, ahead of every ended one.
    await expect(page.locator('tbody tr').first()).toContainText('live');
    await expect(page.getByTestId('worker-e2e-crashloop:1')).toBeVisible();
    await expect(page.getByTestId('worker-e2e-crashloop:520')).toHaveCount(0);
  } finally {
    await db().query(`DELETE FROM workers WHERE host = 'e2e-crashloop'`);
  }
  // Once the list holds every row, the line goes (the page follows without a reload).
  await expect(page.getByTestId('workers-left-out')).toHaveCount(0, { timeout: 15_000 });
});
