import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACTED, redactJsonText, redactValue } from './redact';

const hide = new Set(['password']);

test('a payload key named __proto__ stays a key of the copy a viewer reads, its hidden values redacted', () => {
  // As the API stores it (JSON.parse makes "__proto__" an own key).
  const payload = JSON.parse('{"__proto__": {"user": "bob", "password": "x"}, "a": 1}');
  const seen = redactValue(payload, hide);
  assert.equal(JSON.stringify(seen), `{"__proto__":{"user":"bob","password":"${REDACTED}"},"a":1}`);
  assert.equal(Object.getPrototypeOf(seen), Object.prototype, 'the key set no prototype');
  // And the payload's text, which the job page shows, says the same.
  assert.equal(JSON.parse(redactJsonText(JSON.stringify(payload), hide)).__proto__.password, REDACTED);
});

test('hidden keys at any depth and in any case are redacted, in arrays too; the rest is kept, and the original untouched', () => {
  const payload = { user: { Password: 'x', name: 'n' }, list: [{ PASSWORD: 'y' }, 2], n: null };
  assert.deepEqual(redactValue(payload, hide), { user: { Password: REDACTED, name: 'n' }, list: [{ PASSWORD: REDACTED }, 2], n: null });
  assert.equal(payload.user.Password, 'x');
  assert.equal(redactValue(payload, null), payload, 'no redaction: the value itself');
});
