'use client';

export default function ErrorPage({ error, reset }: { error: Error; reset(): void }) {
  return (
    <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900 dark:border-red-900 dark:bg-red-950 dark:text-red-200">
      <p className="font-medium">This page failed to render</p>
      <p className="mt-1 wrap-anywhere">{error.message}</p>
      <p className="mt-1">Reload, or go back to the overview. If it keeps happening, the server log has the details.</p>
      <button type="button" onClick={reset} className="mt-2 rounded border border-red-400 px-2 py-0.5 text-xs">
        Try again
      </button>
    </div>
  );
}
