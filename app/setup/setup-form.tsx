'use client';
/** /setup?token=… — the first admin chooses a name and password (the one-time link `npm start` prints while there are no users). */
import { useSearchParams } from 'next/navigation';
import { useState } from 'react';
import { Button } from '@/components/ui/button';
import { setupFirstAdmin } from '@/lib/api/auth';

export function SetupForm() {
  const token = useSearchParams().get('token') ?? '';
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="space-y-4 rounded-lg border border-zinc-200 bg-white p-6 dark:border-zinc-800 dark:bg-zinc-900"
      onSubmit={async (e) => {
        e.preventDefault();
        const fd = new FormData(e.currentTarget);
        const password = String(fd.get('password') ?? '');
        if (password !== String(fd.get('again') ?? '')) return setError('the two passwords differ');
        setBusy(true);
        setError(null);
        try {
          await setupFirstAdmin(token, String(fd.get('name') ?? ''), password);
          window.location.assign('/');
        } catch (err) {
          setError((err as Error).message);
          setBusy(false);
        }
      }}
    >
      <h1 className="text-xl font-semibold">Create the first admin</h1>
      {!token && <p role="alert" className="text-sm text-red-700">This page needs the setup link that `npm start` printed.</p>}
      <label className="flex flex-col gap-1 text-sm">
        Name
        <input name="name" autoComplete="username" required maxLength={64} className="rounded border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-950" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        Password (10 characters or more)
        <input name="password" type="password" autoComplete="new-password" required minLength={10} maxLength={200} className="rounded border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-950" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        Password again
        <input name="again" type="password" autoComplete="new-password" required minLength={10} maxLength={200} className="rounded border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-950" />
      </label>
      {error && (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          {error}
        </p>
      )}
      <Button type="submit" variant="primary" disabled={busy || !token}>
        Create admin and sign in
      </Button>
    </form>
  );
}
