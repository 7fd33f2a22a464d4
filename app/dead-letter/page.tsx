import { Suspense } from 'react';
import { DeadLetterView } from './dead-letter-view';

export default function DeadLetterPage() {
  return (
    <Suspense fallback={<p className="text-zinc-500">Loading…</p>}>
      <DeadLetterView />
    </Suspense>
  );
}
