/**
 * What PostgreSQL cannot store in text or jsonb: NUL, and half of a UTF-16 surrogate pair
 * (a lone surrogate, as a string cut inside an emoji leaves). The HTTP API refuses both in
 * what a caller sends (lib/http/schemas.ts), and jsonProblem in a JSON value; what the worker
 * writes on its own — a handler's error message, its stack — is repaired instead
 * (storableText). No dependencies: the worker loads this without the HTTP schemas.
 */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const UNSTORABLE = new RegExp(`${LONE_SURROGATE.source}|\\u0000`, 'g');

/** `s` with every NUL and lone surrogate replaced by U+FFFD, as PostgreSQL's text input would turn a broken character. */
export const storableText = (s: string) => s.replace(UNSTORABLE, '\ufffd');

/** A JSON number literal, at the position searched from (sticky). */
const NUMBER_LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The first number in this JSON text that is not 0 but too small for a double, which
 * JSON.parse reads as 0 (`1e-400`; a concurrency limit of 1e-400 would clear the limit), or
 * null. Read from the text, since the parsed value no longer tells it from a 0 sent as one.
 * Only texts that could hold one are walked (strings skipped): a value below the smallest
 * double (about 4.9e-324) needs an exponent of three digits, or a mantissa with some 225 zeros
 * after the point; an "e-" in text ("e-mail") does not start a walk of a 16 MB body.
 */
const ZEROS = '0'.repeat(200);

/** What a JSON text holding an underflowing number is told (the API's bodies, the CLI's JSON arguments). */
export const underflowText = (literal: string) => `has a number too small for a double (${literal}), which would be read as 0: send it as a string`;
export function underflowingNumber(json: string): string | null {
  // Two searches, not one alternation: every request body passes here, and the alternation
  // tried both at each character (a batch of 1,000 jobs: 74 µs against 20; 16 MB: 11 ms against 5).
  if (!/[eE]-0*[1-9]\d\d/.test(json) && !json.includes(ZEROS)) return null;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (c === '"') {
      // Past the string: to its closing quote, escapes (\" among them) skipped.
      for (i++; i < json.length && json[i] !== '"'; i++) if (json[i] === '\\') i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER_LITERAL.lastIndex = i;
      const m = NUMBER_LITERAL.exec(json);
      if (!m) continue;
      const literal = m[0];
      const mayUnderflow = literal.length > 200 || /[eE]-/.test(literal);
      if (mayUnderflow && Number(literal) === 0 && /[1-9]/.test(literal.split(/[eE]/)[0]!)) return literal.length > 40 ? `${literal.slice(0, 37)}...` : literal;
      i += literal.length - 1;
    }
  }
  return null;
}

/** How deep a payload (or checkpoint) may nest. */
export const MAX_PAYLOAD_DEPTH = 64;

/**
 * Why this JSON value cannot go into a jsonb column, or null when it can. With `parsed`
 * (the value is what JSON.parse made of a request), an integer beyond ±2^53 is refused too:
 * the parser has already rounded it, so the sender's digits are lost. A value a handler
 * built (a checkpoint) holds exactly the number it holds, and jsonb keeps it.
 */
export function jsonProblem(value: unknown, { parsed = false }: { parsed?: boolean } = {}): string | null {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > MAX_PAYLOAD_DEPTH) return `nested deeper than ${MAX_PAYLOAD_DEPTH} levels`;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'contains a NUL character (\\u0000), which PostgreSQL cannot store';
      if (LONE_SURROGATE.test(v)) return 'contains invalid Unicode (a lone surrogate)';
    } else if (typeof v === 'number') {
      // Infinity or NaN would be stored as null; a parsed integer this large was rounded:
      // either way a value the sender never sent, so it is refused.
      if (!Number.isFinite(v)) return 'contains a number beyond the range of a double (send it as a string)';
      if (parsed && Number.isInteger(v) && !Number.isSafeInteger(v)) {
        return `contains an integer beyond ±2^53 (±${Number.MAX_SAFE_INTEGER}), which cannot be kept exactly: send integers beyond ±2^53 as strings`;
      }
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push([x, depth + 1]);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        stack.push([k, depth + 1], [x, depth + 1]);
      }
    }
  }
  return null;
}
