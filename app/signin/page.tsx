import type { Metadata } from 'next';
import { Suspense } from 'react';
import { SignInForm } from './signin-form';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Sign in' };

export default function SignInPage() {
  return (
    <Suspense fallback={null}>
      <SignInForm />
    </Suspense>
  );
}
