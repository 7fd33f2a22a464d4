import type { Metadata } from 'next';
import { Suspense } from 'react';
import { SetupForm } from './setup-form';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Set up' };

export default function SetupPage() {
  return (
    <Suspense fallback={null}>
      <SetupForm />
    </Suspense>
  );
}
