import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cronUsesHash, nextTick, nextTickAfter, SERIES_WALK_MAX } from './cron';

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

test('a valid expression the parser gives up on across a daylight-saving change (Australia/Lord_Howe) still has its next tick, and no wall-clock time runs twice', () => {
  // cron-parser 5 throws "loop limit exceeded" for these, asked from the tick before Lord
  // Howe's clocks go back half an hour (02:00 LHDT to 01:30 LHST, 2026-04-04T15:00Z): the
  // schedule's every tick and resume failed on its stored tick, and it never ran again.
  const zone = 'Australia/Lord_Howe';
  assert.equal(nextTick('0 1 * * *', zone, new Date('2026-04-04T14:00:00Z')).toISOString(), '2026-04-05T14:30:00.000Z', 'daily 01:00: the next night, in LHST');
  assert.equal(nextTick('0 * * * *', zone, new Date('2026-04-04T14:00:00Z')).toISOString(), '2026-04-04T15:30:00.000Z', 'hourly: 02:00 LHST');
  assert.equal(nextTick('0 6 * * 0', zone, new Date('2026-03-28T19:00:00Z')).toISOString(), '2026-04-04T19:30:00.000Z', 'weekly: the Sunday after the change');
  assert.equal(nextTick('0 0 1 * * *', zone, new Date('2026-04-04T14:00:00Z')).toISOString(), '2026-04-05T14:30:00.000Z', 'six fields, seconds first');
  // Walked as the scheduler walks its series, through both of the year's changes: every
  // local date has its 01:00 or 02:00 at most once (a time the clocks skip may be missed).
  const wall = new Intl.DateTimeFormat('en-CA', { timeZone: zone, dateStyle: 'short', timeStyle: 'short', hourCycle: 'h23' });
  for (const cron of ['0 1 * * *', '0 2 * * *']) {
    for (const [start, end] of [['2026-04-01T00:00:00Z', '2026-04-08T00:00:00Z'], ['2026-09-30T00:00:00Z', '2026-10-07T00:00:00Z']]) {
      const seen: string[] = [];
      for (let t = new Date(start!); t < new Date(end!); ) {
        t = nextTick(cron, zone, t);
        seen.push(wall.format(t));
      }
      assert.equal(new Set(seen).size, seen.length, `${cron} from ${start}: ${seen.join(' | ')}`);
      assert.ok(seen.length >= 6, `${cron} from ${start}: ${seen.join(' | ')}`);
    }
  }
  assert.throws(() => nextTick('61 * * * *', zone, new Date('2026-04-04T14:00:00Z')), /\(Australia\/Lord_Howe\): Constraint error/, 'a bad expression is still refused');
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

test('a late tick moves on along its series: a daily 01:30 in New York runs once on the night clocks go back', () => {
  const [daily, ny] = ['30 1 * * *', 'America/New_York'];
  const ranAt = new Date('2025-11-02T05:30:00Z'); // 01:30 EDT
  const following = new Date('2025-11-03T06:30:00Z'); // 01:30 EST the next night
  // Taken late, in the repeated hour (01:00-01:59 EST): counted from then, the parser answers 01:30 EST the same night.
  for (const late of ['2025-11-02T05:31:00Z', '2025-11-02T06:00:00Z', '2025-11-02T06:29:00Z', '2025-11-02T07:00:00Z']) {
    assert.equal(nextTickAfter(daily, ny, nextTick(daily, ny, ranAt), new Date(late)).toISOString(), following.toISOString(), late);
  }
  assert.equal(nextTick(daily, ny, new Date('2025-11-02T06:00:00Z')).toISOString(), '2025-11-02T06:30:00.000Z', "the parser's answer from the repeated hour (why the walk)");
  // An hourly schedule runs at both 01:00s: an hour apart, as it should.
  assert.equal(nextTickAfter('0 * * * *', ny, new Date('2025-11-02T06:00:00Z'), new Date('2025-11-02T05:59:00Z')).toISOString(), '2025-11-02T06:00:00.000Z');
});

test('the walk: a tick still ahead is kept; ticks missed are walked past; past the bound it counts from now', () => {
  const now = new Date('2026-03-10T12:00:30Z');
  assert.equal(nextTickAfter('* * * * *', 'UTC', new Date('2026-03-10T12:05:00Z'), now).toISOString(), '2026-03-10T12:05:00.000Z', 'not yet due: kept');
  assert.equal(nextTickAfter('*/10 * * * *', 'UTC', new Date('2026-03-10T09:00:00Z'), now).toISOString(), '2026-03-10T12:10:00.000Z', 'missed ticks collapse');
  const away = new Date(now.getTime() - (SERIES_WALK_MAX + 5) * 60_000);
  assert.equal(nextTickAfter('* * * * *', 'UTC', away, now).toISOString(), '2026-03-10T12:01:00.000Z', 'away too long: from now');
});
