'use client';
/** /signin — name and password; on success, back to where the operator was going (same-origin paths only). */
import { useSearchParams } from 'next/navigation';
import { useState } from 'react';
import { Button } from '@/components/ui/button';
import { signIn } from '@/lib/api/auth';
import { safeNext } from '@/lib/ui/safe-next';

export function SignInForm() {
  const params = useSearchParams();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="space-y-4 rounded-lg border border-zinc-200 bg-white p-6 dark:border-zinc-800 dark:bg-zinc-900"
      onSubmit={async (e) => {
        e.preventDefault();
        const fd = new FormData(e.currentTarget);
        setBusy(true);
        setError(null);
        try {
          await signIn(String(fd.get('name') ?? ''), String(fd.get('password') ?? ''));
          window.location.assign(safeNext(params.get('next'), window.location.origin));
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <h1 className="text-xl font-semibold">Sign in to Leasehold</h1>
      <label className="flex flex-col gap-1 text-sm">
        Name
        <input name="name" autoComplete="username" required maxLength={64} className="rounded border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-950" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        Password
        <input name="password" type="password" autoComplete="current-password" required maxLength={200} className="rounded border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-950" />
      </label>
      {error && (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          {error}
        </p>
      )}
      <Button type="submit" variant="primary" disabled={busy}>
        Sign in
      </Button>
      <p className="text-xs text-zinc-500">
        No account? An admin adds operators with <code>npx leasehold user add NAME --role viewer|operator|admin</code>.
      </p>
    </form>
  );
}
