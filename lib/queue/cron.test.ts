import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextTick } from './cron';

test("a tick is always after the instant it is computed from, across a half-hour daylight-saving change (Pacific/Chatham)", () => {
  // cron-parser answers 12:15Z for the next */15 tick after 13:00Z on the day Chatham's clocks
  // go back: taken as the next tick, the schedule was due again at once, for ever. (The parser
  // also skips some ticks of the repeated hour there, 14:00Z-14:45Z: a limitation left alone.)
  const start = Date.parse('2026-04-04T10:00:00Z');
  for (let t = start; t < start + 6 * 3_600_000; t += 5 * 60_000) {
    const after = new Date(t);
    const next = nextTick('*/15 * * * *', 'Pacific/Chatham', after);
    assert.ok(next > after, `after ${after.toISOString()}: ${next.toISOString()}`);
  }
  assert.equal(nextTick('*/15 * * * *', 'Europe/Berlin', new Date('2026-03-29T00:50:00Z')).toISOString(), '2026-03-29T01:00:00.000Z', 'an ordinary zone as before');
});
