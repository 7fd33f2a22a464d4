/**
 * Error fingerprints: the dead letter groups failed jobs by type and by the shape of
 * their last error, with what varies from job to job (ids, numbers, hosts, quoted values)
 * replaced, so "timeout after 30000 ms calling …/ch_3f2a" and "…/ch_9b1c" are one group.
 *
 * Computed in SQL from the error text (no column of its own: the worker's statements
 * stay as they are), and only over failed jobs, which jobs_status_idx finds.
 */

/**
 * The error's shape: first line, at most 300 characters, quoted values → ?, tokens with
 * digits → #. A token may hold `+` and `/` (base64: a signature, a key): split at them, each
 * random value left its own pattern ("#+#+HpaS+#") and the group scattered into one per job.
 * (`=` stays a separator, so "timeout=30000" keeps its name; base64's padding, the same for
 * values of one length, stays as it is.) No lookahead: PostgreSQL's cost for one grows with
 * the square of a run's length, and this runs over every failed row of the dead letter.
 */
export const errorPatternSql = (col = 'error') =>
  `regexp_replace(regexp_replace(regexp_replace(left(split_part(coalesce(${col}, ''), E'\\n', 1), 300), '''[^'']*''|"[^"]*"', '?', 'g'), '[A-Za-z0-9_.:@/+-]*[0-9][A-Za-z0-9_.:@/+-]*', '#', 'g'), '\\s+', ' ', 'g')`;

/** A short, URL-safe key for the pattern (12 hex digits of its md5). */
export const fingerprintSql = (col = 'error') => `left(md5(${errorPatternSql(col)}), 12)`;

export const FINGERPRINT_RE = /^[0-9a-f]{12}$/;
