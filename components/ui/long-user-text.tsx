'use client';
import { useState } from 'react';
import { clampText } from '@/lib/ui/clamp';
import { int } from '@/lib/ui/format';
import { UserText } from './user-text';

/**
 * UserText for what may be very long (an error message): its start, and a button for the
 * rest, so one job's 10 KB error does not push everything else on its page out of sight.
 */
export function LongUserText({ text, multiline }: { text: string | null | undefined; multiline?: boolean }) {
  const [all, setAll] = useState(false);
  if (!text) return null;
  const cut = clampText(text);
  const shown = cut && !all ? cut : null;
  return (
    <>
      <UserText text={shown ? shown.head : text} multiline={multiline} />
      {shown && '… '}
      {cut && (
        <button
          type="button"
          onClick={() => setAll(!all)}
          aria-expanded={all}
          className="whitespace-nowrap text-xs text-sky-700 hover:underline dark:text-sky-400"
          data-testid="show-all-text"
        >
          {all ? 'show less' : `show all (${int(cut.rest)} more character${cut.rest === 1 ? '' : 's'})`}
        </button>
      )}
    </>
  );
}
