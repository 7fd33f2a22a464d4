import { escapeOf, type VisibleOptions, visibleParts } from '@/lib/ui/visible';

/**
 * Text someone else wrote (a queue or type name, an error, a payload string, a reason),
 * rendered so that it shows what it holds: inside <bdi>, so right-to-left text cannot
 * reorder the words around it, and with each hidden character (lib/ui/visible.ts) shown
 * as its escape in a marked box, so a queue `x\u202Eliam` reads as `x\u202eliam`, never
 * as `xmail`. React escapes the rest; nothing here is HTML.
 */
export function UserText({ text, multiline }: { text: string | null | undefined } & VisibleOptions) {
  if (!text) return null;
  return (
    <bdi>
      {visibleParts(text, { multiline }).map((p, k) =>
        typeof p === 'string' ? (
          p
        ) : (
          // dir="ltr" (an isolate): inside right-to-left text the escape's backslash would
          // otherwise be moved to its far end (`u202e\`), the box split in two.
          <span
            key={k}
            dir="ltr"
            className="mx-px rounded-sm bg-amber-100 px-0.5 font-mono text-[0.85em] text-amber-900 dark:bg-amber-900 dark:text-amber-100"
            title={`a hidden character, U+${p.hidden.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, written here as its escape`}
            data-hidden-char
          >
            {escapeOf(p.hidden)}
          </span>
        ),
      )}
    </bdi>
  );
}
