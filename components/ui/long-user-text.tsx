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
  const cut = all ? null : clampText(text);
  return (
    <>
      <UserText text={cut ? cut.head : text} multiline={multiline} />
      {cut && '… '}
      {(cut || all) && (
        <button type="button" onClick={() => setAll(!all)} className="whitespace-nowrap text-xs text-sky-700 hover:underline dark:text-sky-400" data-testid="show-all-text">
          {cut ? `show all (${int(cut.rest)} more characters)` : 'show less'}
        </button>
      )}
    </>
  );
}
