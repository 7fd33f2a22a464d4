/**
 * Text from the queue (queue and type names, error messages, payload strings, worker ids,
 * audit reasons) as a person will read it. Anyone who can enqueue or fail a job writes such
 * text, and some characters in it do not show as themselves:
 * - C0 and C1 control characters and DEL: in a terminal they retitle or clear the screen;
 * - the bidirectional controls (U+202E and kin): they reorder what follows, so a queue
 *   `x\u202Eliam` reads as `xmail`, in a terminal and in a browser alike;
 * - the line and paragraph separators: they start a line inside what looks like one value.
 * Each is shown as its escape (`\x1b`, `\u202e`), the way a JSON reader would write it.
 * Other text, right-to-left letters and zero-width characters included, stays as it is.
 * The CLI prints through `visible`; the console renders through <UserText>, which marks
 * each escape so it cannot be taken for a backslash typed by someone.
 */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** Tab, line feed and carriage return lay out multi-line text (an error's stack), and show nothing else. */
const LAYOUT = new Set(['\t', '\n', '\r']);

export const escapeOf = (c: string) => {
  const n = c.charCodeAt(0);
  return n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};

export interface VisibleOptions {
  /** Keep tab, line feed and carriage return: for text laid out on several lines. */
  multiline?: boolean;
}

/** Whether the text holds a character that does not show as itself (a name that must read as one line refuses them). */
export const hasHidden = (s: string) => s.search(HIDDEN) !== -1;

/** The text with every hidden character shown as its escape. */
export const visible = (s: string, { multiline = false }: VisibleOptions = {}) =>
  s.replace(HIDDEN, (c) => (multiline && LAYOUT.has(c) ? c : escapeOf(c)));

/** The text cut into plain runs and single hidden characters (`{ hidden }`), in order. */
export function visibleParts(s: string, { multiline = false }: VisibleOptions = {}): (string | { hidden: string })[] {
  const parts: (string | { hidden: string })[] = [];
  let from = 0;
  for (const m of s.matchAll(HIDDEN)) {
    if (multiline && LAYOUT.has(m[0])) continue;
    if (m.index > from) parts.push(s.slice(from, m.index));
    parts.push({ hidden: m[0] });
    from = m.index + 1;
  }
  if (from < s.length || parts.length === 0) parts.push(s.slice(from));
  return parts;
}
