import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cronUsesHash, nextTick } from './cron';

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

test('an expression of other than five or six fields is refused: the parser would fill in the rest', () => {
  const after = new Date('2026-12-05T00:00:00Z');
  // Meant as 04:30 on the 1st; the parser reads it as every minute of every Monday in April.
  assert.throws(() => nextTick('30 4 1', 'UTC', after), /"30 4 1" \(UTC\): 3 fields: five are needed \(minute hour day-of-month month day-of-week\), or six with seconds first/);
  assert.throws(() => nextTick('1', 'UTC', after), /1 field: five are needed/);
  assert.throws(() => nextTick('0 0 0 1 1 * 2027', 'UTC', after), /7 fields/);
  assert.equal(nextTick(' 30 4 1 * * ', 'UTC', after).toISOString(), '2027-01-01T04:30:00.000Z', 'five, with spaces around');
  assert.equal(nextTick('0 30 4 1 * *', 'UTC', after).toISOString(), '2027-01-01T04:30:00.000Z', 'six: seconds first');
  assert.equal(nextTick('@daily', 'UTC', after).toISOString(), '2026-12-06T00:00:00.000Z', 'an alias is one word');
  assert.throws(() => nextTick('@reboot', 'UTC', after), /"@reboot" \(UTC\): not an alias the parser knows \(@yearly, @annually, .*@weekends\)$/);
});

test('an H is found in any field, alone or with a range or step; not inside a day name', () => {
  for (const c of ['H * * * *', '0 H * * *', 'H/15 * * * *', 'H(0-29) 3 * * *', '0 0 * * H']) assert.equal(cronUsesHash(c), true, c);
  for (const c of ['0 3 * * THU', '0 3 * * MON-THU', '@hourly', '*/5 * * * *']) assert.equal(cronUsesHash(c), false, c);
});
