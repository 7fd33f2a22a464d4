/**
 * The action dialog's confirm step, rendered to markup (no browser): what it lets the
 * operator confirm, and that the counts it states are ones the run keeps to.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import type { BulkReportDto } from '@/lib/api/types';
import { ActionDialog, type ActionDialogProps } from './action-dialog';

const report = (r: Partial<BulkReportDto>): BulkReportDto => ({
  action: 'recover',
  preview: true,
  total: 0,
  changed: 0,
  skipped: 0,
  byStatus: {},
  byOutcome: {},
  reasons: [],
  items: [],
  itemsTruncated: false,
  maxId: null,
  finishedBy: null,
  ...r,
});

function render(preview: BulkReportDto, extra: Partial<ActionDialogProps> = {}) {
  const html = renderToStaticMarkup(
    createElement(ActionDialog, {
      action: 'recover',
      target: 'every running job whose lease expired, and due jobs whose wake-up signal is missing',
      options: { resetAttempts: false, revokeLease: false },
      offers: {},
      onOptions() {},
      reason: '',
      onReason() {},
      forbidden: null,
      preview,
      previewLoading: false,
      applying: false,
      onConfirm() {},
      onClose() {},
      ...extra,
    }),
  );
  const button = /<button[^>]*data-testid="confirm-action"[^>]*>(.*?)<\/button>/.exec(html);
  assert.ok(button, 'a confirm button');
  return { html, label: button[1]!, enabled: !/\bdisabled=""/.test(button[0]) };
}

const due = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(100 + i), queue: 'mail', type: 'demo.noop', status: 'queued' as const, waitedMs: 5_000 }));

test('a recover whose only work is re-ringing missing wake-up signals can be confirmed', () => {
  const r = render(report({ resignal: due(2), resignalTotal: 2, resignalQueues: [{ queue: 'mail', signalBacklog: 0, pushed: 0 }], recoverLimit: 10_000, moreMayChange: false }));
  assert.equal(r.enabled, true);
  assert.equal(r.label, 'Recover: re-ring 2 wake-up signals');
  assert.match(r.html, /No expired leases\./);
  assert.doesNotMatch(r.html, /Nothing to recover/);
});

test('a recover with nothing at all to do cannot be confirmed', () => {
  const r = render(report({ resignal: [], resignalTotal: 0, resignalQueues: [], recoverLimit: 10_000, moreMayChange: false }));
  assert.equal(r.enabled, false);
  assert.match(r.html, /Nothing to recover: no job matches\./);
});

test('a recover preview at its listing limit says "at least", says what one run moves, and asks for the count to be typed', () => {
  const items = Array.from({ length: 1_000 }, (_, i) => ({ id: String(i + 1), ok: true, outcome: 'would_change' as const, status: 'running' as const }));
  const r = render(report({ total: 1_000, changed: 1_000, items, byStatus: { running: 1_000 }, resignal: [], resignalTotal: 0, recoverLimit: 10_000, moreMayChange: true }));
  assert.equal(r.label, 'Recover at least 1,000 jobs');
  assert.match(r.html, /at least 1,000 jobs: <strong>at least 1,000<\/strong> will change/);
  assert.match(r.html, /One run recovers up to 10,000; any beyond that wait for the next sweep/);
  assert.match(r.html, /Type 1,000 to confirm/);
  assert.equal(r.enabled, false, 'not before the count is typed');
});

test('other actions read as before', () => {
  const r = render(report({ action: 'requeue', total: 3, changed: 1, skipped: 2 }), { action: 'requeue' });
  assert.equal(r.label, 'Requeue 1 job');
  assert.equal(r.enabled, true);
  assert.match(r.html, /3 jobs: <strong>1<\/strong> will change, <strong>2<\/strong> will be skipped/);
  assert.equal(render(report({ action: 'delete', total: 2, skipped: 2 }), { action: 'delete' }).enabled, false);
});

test('deleting, which cannot be undone, asks for the count to be typed above a hundred jobs', () => {
  const del = (n: number) => render(report({ action: 'delete', total: n, changed: n }), { action: 'delete' });
  assert.equal(del(100).enabled, true);
  const r = del(286);
  assert.equal(r.enabled, false, 'not before the count is typed');
  assert.match(r.html, /Type 286 to confirm/);
  assert.equal(render(report({ action: 'requeue', total: 286, changed: 286 }), { action: 'requeue' }).enabled, true, 'a requeue of as many: one click');
});

test('a requeue offers to revoke live leases only when the selection holds running jobs, and says the old run goes on until its heartbeat', () => {
  const requeue = (byStatus: BulkReportDto['byStatus']) =>
    render(report({ action: 'requeue', total: 2, changed: 2, byStatus }), { action: 'requeue', target: '2 selected jobs', offers: { resetAttempts: true, revokeLease: true } }).html;
  assert.doesNotMatch(requeue({ failed: 2 }), /Revoke live leases/);
  const mixed = requeue({ failed: 1, running: 1 });
  assert.match(mixed, /Revoke live leases/);
  assert.match(mixed, /runs\s+on until its next heartbeat/);
  assert.match(mixed, /unticked, a job that used up its attempts gets one more/);
});
