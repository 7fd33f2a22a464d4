/** An attempt's log link: placeholders filled and percent-encoded, the template's own text kept, nothing but http(s) linked. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logUrl, logUrlTemplateProblem } from './log-links';

const attempt = {
  jobId: '42',
  attempt: 2,
  workerId: 'web-1:314:a1b2c3',
  queue: 'mail & more',
  type: 'email.send',
  startedAt: '2026-12-04T10:00:00.000Z',
  finishedAt: '2026-12-04T10:00:02.500Z',
  nowMs: Date.parse('2026-12-04T10:00:09.000Z'),
};

test('every placeholder filled, each value percent-encoded', () => {
  const t = 'https://logs.example.com/q?job={id}&n={attempt}&w={worker}&queue={queue}&type={type}&from={startedAt}&to={finishedAt}&a={startedMs}&b={finishedMs}';
  assert.equal(
    logUrl(t, attempt),
    'https://logs.example.com/q?job=42&n=2&w=web-1%3A314%3Aa1b2c3&queue=mail%20%26%20more&type=email.send&from=2026-12-04T10%3A00%3A00.000Z&to=2026-12-04T10%3A00%3A02.500Z&a=1796378400000&b=1796378402500',
  );
});

test("a running attempt's span ends at the page's time; no template, no link", () => {
  assert.equal(
    logUrl('https://l.example.com/?from={startedMs}&to={finishedMs}&t={finishedAt}', { ...attempt, finishedAt: null }),
    'https://l.example.com/?from=1796378400000&to=1796378409000&t=2026-12-04T10%3A00%3A09.000Z',
  );
  assert.equal(logUrl(null, attempt), null);
  assert.equal(logUrl('', attempt), null);
});

test("the template's own braces and text are kept; a value cannot break out of its place", () => {
  const kibana = "https://kibana.example.com/app/discover#/?_a=(query:(language:kuery,query:'job:{id}'))&x={not a placeholder}";
  assert.equal(logUrl(kibana, attempt), "https://kibana.example.com/app/discover#/?_a=(query:(language:kuery,query:'job:42'))&x={not a placeholder}");
  const hostile = logUrl('https://l.example.com/?q={queue}', { ...attempt, queue: '"><script>x</script>&admin=1#' })!;
  assert.equal(new URL(hostile).searchParams.get('q'), '"><script>x</script>&admin=1#');
  assert.equal(new URL(hostile).searchParams.get('admin'), null);
  // A quote cannot close the quoted string the template puts the value in.
  assert.equal(logUrl("https://k.example.com/#/?_a=(query:'queue:{queue}')", { ...attempt, queue: "x') OR ('1" }), "https://k.example.com/#/?_a=(query:'queue:x%27%29%20OR%20%28%271')");
});

test('only http(s) is linked, and a template is checked once, at start', () => {
  assert.equal(logUrl('javascript:alert({id})', attempt), null);
  assert.equal(logUrlTemplateProblem('https://l.example.com/{id}'), null);
  assert.match(logUrlTemplateProblem('https://l.example.com/{job}/{run}')!, /^unknown placeholders \{job\}, \{run\}; known: /);
  assert.match(logUrlTemplateProblem('ftp://l.example.com/{id}')!, /http:\/\/ or https:\/\//);
  assert.match(logUrlTemplateProblem('/logs/{id}')!, /absolute URL/);
});

test("a name the object prototype has ({constructor}, {toString}) is no placeholder: refused at start, never filled with a function's text", () => {
  assert.match(logUrlTemplateProblem('https://l.example.com/?job={id}&x={constructor}')!, /^unknown placeholder \{constructor\}; known: /);
  assert.match(logUrlTemplateProblem('https://l.example.com/{toString}/{hasOwnProperty}')!, /^unknown placeholders \{toString\}, \{hasOwnProperty\}/);
  // A template that got past the check (the link is built in the browser from what the API says) keeps such text as written.
  assert.equal(logUrl('https://l.example.com/?job={id}&x={constructor}', attempt), 'https://l.example.com/?job=42&x={constructor}');
});
