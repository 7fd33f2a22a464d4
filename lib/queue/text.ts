/**
 * What PostgreSQL cannot store in text or jsonb: NUL, and half of a UTF-16 surrogate pair
 * (a lone surrogate, as a string cut inside an emoji leaves). The HTTP API refuses both in
 * what a caller sends (lib/http/schemas.ts); what the worker writes on its own — a handler's
 * error message, its stack — is repaired instead (storableText).
 */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const UNSTORABLE = new RegExp(`${LONE_SURROGATE.source}|\\u0000`, 'g');

/** `s` with every NUL and lone surrogate replaced by U+FFFD, as PostgreSQL's text input would turn a broken character. */
export const storableText = (s: string) => s.replace(UNSTORABLE, '\ufffd');
