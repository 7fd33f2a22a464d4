import type { Metadata } from 'next';
import { Suspense } from 'react';
import { DeadLetterView } from './dead-letter-view';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Dead letter' };

export default function DeadLetterPage() {
  return (
    <Suspense fallback={<p className="text-zinc-500">Loading…</p>}>
      <DeadLetterView />
    </Suspense>
  );
}
