'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import type { ReactNode } from 'react';

const links = [
  { href: '/', label: 'Overview' },
  { href: '/jobs', label: 'Jobs' },
  { href: '/dead-letter', label: 'Dead letter' },
  { href: '/workers', label: 'Workers' },
  { href: '/schedules', label: 'Schedules' },
  { href: '/audit', label: 'Audit' },
];

const ENV_TONE = (env: string) =>
  /prod/i.test(env)
    ? 'bg-red-600 text-white'
    : /stag|pre|uat/i.test(env)
      ? 'bg-amber-500 text-zinc-950'
      : 'bg-emerald-600 text-white';

export function Nav({ environment, right, admin = false }: { environment: string | null; right?: ReactNode; admin?: boolean }) {
  const path = usePathname();
  return (
    <header className="border-b border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <nav className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3" aria-label="Main">
        <Link href="/" className="font-semibold tracking-tight">
          Leasehold
        </Link>
        {environment && (
          <span className={`rounded px-2 py-0.5 text-xs font-bold uppercase tracking-wide ${ENV_TONE(environment)}`} data-testid="env-badge" title="LEASEHOLD_ENV">
            {environment}
          </span>
        )}
        {[...links, ...(admin ? [{ href: '/admin', label: 'Admin' }] : [])].map((l) => {
          const active = l.href === '/' ? path === '/' : path.startsWith(l.href);
          return (
            <Link
              key={l.href}
              href={l.href}
              aria-current={active ? 'page' : undefined}
              className={`text-sm ${active ? 'font-medium text-zinc-900 dark:text-zinc-50' : 'text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100'}`}
            >
              {l.label}
            </Link>
          );
        })}
        {/* Wraps on a phone: signed in, the controls are wider than 390 px and scrolled the page sideways. */}
        <div className="ml-auto flex flex-wrap items-center justify-end gap-2">{right}</div>
      </nav>
    </header>
  );
}
