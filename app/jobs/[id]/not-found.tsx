import Link from 'next/link';

export default function JobNotFound() {
  return (
    <div className="rounded-lg border border-dashed border-zinc-300 p-8 text-center dark:border-zinc-700">
      <p className="font-medium">No such job</p>
      <p className="mt-2 text-sm text-zinc-500">
        A job id is a number, as in <code>/jobs/42</code>. <Link href="/jobs" className="underline">Search the jobs</Link>.
      </p>
    </div>
  );
}
