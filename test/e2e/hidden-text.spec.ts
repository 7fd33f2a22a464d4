/**
 * Text that would not show as itself: a queue `x\u202Eliam` reads as `xmail` wherever a
 * browser draws it raw, an error can hold a line separator and a terminal escape. Such a
 * job is listed, opened, grouped in the dead letter, counted on the overview and put in
 * an action's dialog; on every one of those pages no hidden character reaches the page's
 * text, its tooltips or its labels, and each one shows as its marked escape (`\u202e`).
 */
import { type Page } from '@playwright/test';
import { expect, test } from './test';
import { closeDb, db } from './helpers';

test.afterAll(closeDb);

const HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const JOB = {
  queue: 'x\u202Eliam',
  type: 'report.\u2067fdp\u2069',
  error: 'timeout\u2028FORGED: all good\u001b[2J',
  stack: 'Error: timeout\n    at send (\u202Esj.liam:1:2)',
  worker: 'w\u2066-1',
  payload: { to: '\u202Emoc.live@bob', ['k\u200Fey']: 'v\u0085' },
};

async function hiddenTextJob(): Promise<string> {
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, worker_id, started_at, finished_at, error)
     VALUES ($1, $2, 'failed', $3::jsonb, 1, 1, 1, $4, now(), now(), $5) RETURNING job_id`,
    [JOB.queue, JOB.type, JSON.stringify(JOB.payload), JOB.worker, JOB.error],
  );
  const id = String(rows[0].job_id);
  await db().query(
    `INSERT INTO ended_attempts (job_id, attempt, worker_id, started_at, outcome, error, error_stack) VALUES ($1, 1, $2, now(), 'failed', $3, $4)`,
    [id, JOB.worker, JOB.error, JOB.stack],
  );
  return id;
}

/** What the operator reads and hears: the page's text, its tooltips and its accessible labels. */
async function expectNothingHidden(page: Page, where: string) {
  const { text, attributes } = await page.evaluate(() => ({
    text: document.body.innerText,
    attributes: [...document.querySelectorAll('[title], [aria-label]')].flatMap((e) => [e.getAttribute('title') ?? '', e.getAttribute('aria-label') ?? '']),
  }));
  const found = (s: string) => [...s].filter((c) => HIDDEN.test(c)).map((c) => `U+${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  expect(found(text), `hidden characters in the text of ${where}`).toEqual([]);
  expect(found(attributes.join('')), `hidden characters in the tooltips and labels of ${where}`).toEqual([]);
}

test('a job whose names, error and payload hold hidden characters shows each one as its marked escape, on every page', async ({ page }) => {
  const id = await hiddenTextJob();

  await page.goto(`/jobs?status=failed&queue=${encodeURIComponent(JOB.queue)}`);
  const row = page.getByTestId(`job-row-${id}`);
  await expect(row).toContainText('x\\u202eliam');
  await expect(row).toContainText('report.\\u2067fdp\\u2069');
  await expect(row).toContainText('timeout\\u2028FORGED: all good\\x1b[2J');
  await expect(row.locator('[data-hidden-char]').first()).toHaveAttribute('title', /U\+202E/);
  // The filter the page describes (and a bulk action would apply to) is shown the same way.
  await row.getByRole('checkbox').click();
  await expectNothingHidden(page, 'the jobs list');

  await page.goto(`/jobs/${id}`);
  await expect(page.getByTestId('last-error')).toHaveText('timeout\\u2028FORGED: all good\\x1b[2J');
  await expect(page.getByTestId('attempt-1')).toContainText('w\\u2066-1');
  await page.getByTestId('attempt-1').getByText('stack trace').click();
  await expect(page.getByTestId('attempt-1')).toContainText('at send (\\u202esj.liam:1:2)');
  await expect(page.getByTestId('payload')).toContainText('"\\u202emoc.live@bob"');
  await expect(page.getByTestId('payload')).toContainText('"k\\u200fey"');
  await expect(page.getByTestId('payload')).toContainText('"v\\u0085"');
  await expectNothingHidden(page, 'the job page');
  await page.getByRole('button', { name: 'Delete' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText(`job #${id} (report.\\u2067fdp\\u2069, failed)`);
  await expect(dialog.getByTestId(`action-item-${id}`)).toContainText('x\\u202eliam');
  await expectNothingHidden(page, 'the delete dialog');
  await dialog.getByRole('button', { name: 'Back' }).click();
  await expect(dialog).toBeHidden();

  await page.goto('/dead-letter');
  await expect(page.getByTestId('dead-letter-groups')).toContainText('report.\\u2067fdp\\u2069');
  await expectNothingHidden(page, 'the dead letter');

  await page.goto('/');
  await expect(page.getByTestId('queue-table')).toContainText('x\\u202eliam');
  await expectNothingHidden(page, 'the overview');
});

test('inside right-to-left text the escape of a hidden character stays one box, read left to right', async ({ page }) => {
  const queue = 'صف\u202Eliam';
  const { rows } = await db().query(
    `INSERT INTO jobs (queue, type, status, payload, attempt_count, max_attempts, attempt_budget, finished_at, error)
     VALUES ($1, 'demo.noop', 'failed', '{}', 1, 1, 1, now(), 'خطأ في الاتصال \u202Egnp.exe') RETURNING job_id`,
    [queue],
  );
  await page.goto(`/jobs/${rows[0].job_id}`);
  const box = page.getByTestId('last-error').locator('[data-hidden-char]');
  await expect(box).toHaveText('\\u202e');
  // Where the browser drew each character: the backslash first, at the left (without an
  // isolate, the bidi algorithm moved it to the right of "u202e").
  const lefts = await box.evaluate((el) => {
    const text = el.firstChild!;
    return [...(text.textContent ?? '')].map((_, k) => {
      const r = document.createRange();
      r.setStart(text, k);
      r.setEnd(text, k + 1);
      return r.getBoundingClientRect().left;
    });
  });
  expect(lefts.length).toBe(6);
  expect(lefts, 'each character right of the one before').toEqual([...lefts].sort((a, b) => a - b));
});
