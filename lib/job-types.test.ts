import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { lossyPart, registrationOf } from './job-types';

test('a payload schema JSON Schema cannot carry faithfully is registered as none, so producers never refuse what the handler takes', () => {
  const lossy = {
    coerce: z.object({ n: z.coerce.number() }),
    flags: z.object({ code: z.string().regex(/^abc$/i) }),
    unicode: z.object({ name: z.string().regex(/^\p{L}+$/u) }),
    preprocess: z.preprocess(Number, z.number()),
    fallback: z.object({ mode: z.string().catch('d') }),
    nested: z.object({ items: z.array(z.object({ at: z.string().transform((s) => new Date(s)) })) }),
  };
  for (const [name, schema] of Object.entries(lossy)) {
    assert.ok(lossyPart(schema), name);
    assert.equal(registrationOf(name, { payload: schema }).payloadSchema, null, name);
  }
  // What survives is registered, and the rebuilt schema takes what the original takes.
  const plain = z.object({ to: z.string().email(), n: z.number().int().min(1).optional(), tags: z.array(z.enum(['a', 'b'])), note: z.string().nullable() });
  assert.equal(lossyPart(plain), null);
  const registered = registrationOf('plain', { payload: plain, description: 'd', timeoutMs: 5 });
  assert.ok(registered.payloadSchema);
  const rebuilt = z.fromJSONSchema(registered.payloadSchema as never);
  for (const ok of [{ to: 'a@b.co', tags: [], note: null }, { to: 'a@b.co', n: 3, tags: ['a', 'b'], note: 'x' }]) {
    assert.equal(plain.safeParse(ok).success, true);
    assert.equal(rebuilt.safeParse(ok).success, true, JSON.stringify(ok));
  }
  assert.equal(rebuilt.safeParse({ to: 'nope', tags: [], note: null }).success, false);
  // A module's mistake (a string where a schema goes) is no schema, with a warning: it used to
  // stop the worker at start with "Cannot use 'in' operator".
  assert.equal(registrationOf('typo', { payload: 'z.object({})' as never }).payloadSchema, null);
});
