/**
 * The start of a long text to show until asked for all of it: a 10 KB error (a handler that
 * threw with an HTML page in its message) otherwise fills a job's page. At most `lines` lines
 * and `chars` characters, cut between code points (never inside a surrogate pair), or null
 * when the whole text fits.
 */
export function clampText(text: string, { chars = 600, lines = 8 }: { chars?: number; lines?: number } = {}): { head: string; rest: number } | null {
  const points = Array.from(text);
  let end = Math.min(points.length, chars);
  let newlines = 0;
  for (let k = 0; k < end; k++) {
    if (points[k] === '\n' && ++newlines === lines) {
      end = k;
      break;
    }
  }
  // What would be left out is nothing, or only space (a final newline): the whole text.
  if (end >= points.length || !points.slice(end).join('').trim()) return null;
  return { head: points.slice(0, end).join(''), rest: points.length - end };
}
