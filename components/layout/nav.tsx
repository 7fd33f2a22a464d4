import Link from 'next/link';

const links = [
  { href: '/', label: 'Overview' },
  { href: '/jobs', label: 'Jobs' },
  { href: '/dead-letter', label: 'Dead letter' },
  { href: '/workers', label: 'Workers' },
];

export function Nav() {
  return (
    <header className="border-b border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <nav className="mx-auto flex max-w-7xl items-center gap-6 px-4 py-3" aria-label="Main">
        <Link href="/" className="font-semibold tracking-tight">
          Leasehold
        </Link>
        {links.map((l) => (
          <Link key={l.href} href={l.href} className="text-sm text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100">
            {l.label}
          </Link>
        ))}
      </nav>
    </header>
  );
}
