import Link from 'next/link';

export default function NotFound() {
  return (
    <div className="rounded-lg border border-dashed border-zinc-300 p-8 text-center dark:border-zinc-700">
      <p className="font-medium">No such page</p>
      <p className="mt-2 text-sm text-zinc-500">
        Try the <Link href="/" className="underline">overview</Link>, the <Link href="/jobs" className="underline">jobs</Link> or press <kbd>?</kbd> for
        shortcuts.
      </p>
    </div>
  );
}
