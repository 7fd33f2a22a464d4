'use client';
/**
 * The frame around every page: navigation with the environment badge, live-refresh
 * control, theme switch, keyboard shortcuts and their help.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { usePathname, useRouter } from 'next/navigation';
import { type ReactNode, useState } from 'react';
import { Nav } from '@/components/layout/nav';
import { RefreshControl } from '@/components/layout/refresh-control';
import { ShortcutsHelp } from '@/components/layout/shortcuts-help';
import { Dialog } from '@/components/ui/dialog';
import { useClockOffset } from '@/lib/api/clock';
import { useConnectionTrouble } from '@/lib/api/connection';
import { consoleMetaQuery } from '@/lib/api/console';
import { meQuery, signOut } from '@/lib/api/auth';
import { INTERVALS, pauseReason, useRefresh } from '@/lib/ui/refresh';
import { SHORTCUTS_HELP, useShortcuts } from '@/lib/ui/shortcuts';
import { useTheme } from '@/lib/ui/theme';

export function Shell({ children }: { children: ReactNode }) {
  const path = usePathname();
  const open = path === '/signin' || path === '/setup';
  const meta = useQuery({ ...consoleMetaQuery(), enabled: !open });
  const me = useQuery({ ...meQuery(), enabled: !open });
  const refresh = useRefresh();
  const qc = useQueryClient();
  const router = useRouter();
  const [help, setHelp] = useState(false);
  const [, , toggleTheme] = useTheme();
  const offset = useClockOffset();
  const trouble = useConnectionTrouble();
  const refreshNow = () => void qc.invalidateQueries({ predicate: (q) => q.queryKey[0] !== 'actions' });
  useShortcuts({
    '?': () => setHelp(true),
    '/': () => {
      const el = document.getElementById('job-search') as HTMLInputElement | null;
      if (el) el.focus();
      else {
        // Already on the jobs page, its search box not up yet (`g r` then `/` in quick
        // succession): keep the page's filters, not start over from every job.
        const q = new URLSearchParams(window.location.pathname === '/jobs' ? window.location.search : '');
        q.set('focus', 'search');
        router.push(`/jobs?${q}`);
      }
    },
    'g o': () => router.push('/'),
    'g j': () => router.push('/jobs'),
    'g r': () => router.push('/jobs?status=running'),
    'g d': () => router.push('/dead-letter'),
    'g w': () => router.push('/workers'),
    'g s': () => router.push('/schedules'),
    'g a': () => router.push('/audit'),
    r: refreshNow,
    p: () => refresh.setPaused(!refresh.paused),
    t: toggleTheme,
  });
  if (open) return <main className="mx-auto max-w-md px-4 py-16">{children}</main>;
  return (
    <>
      {me.data?.authOff && (
        <div role="alert" data-testid="auth-off-banner" className="bg-red-700 px-4 py-1.5 text-center text-sm font-bold uppercase tracking-wide text-white">
          Auth off — local demo only: LEASEHOLD_AUTH=off lets anyone who reaches this port change every job
        </div>
      )}
      <Nav
        environment={meta.data?.environment ?? null}
        admin={me.data?.role === 'admin' && !me.data.authOff}
        right={
          <>
            {me.data && !me.data.authOff && (
              <span className="flex items-center gap-2 text-xs text-zinc-600 dark:text-zinc-400" data-testid="signed-in-as">
                <span>
                  {me.data.name} · <span className="font-medium">{me.data.role}</span>
                </span>
                <button
                  type="button"
                  onClick={async () => {
                    await signOut().catch(() => {});
                    window.location.assign('/signin');
                  }}
                  className="rounded border border-zinc-300 px-1.5 py-0.5 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
                >
                  Sign out
                </button>
              </span>
            )}
            <RefreshControl
              intervalMs={refresh.intervalMs}
              intervals={INTERVALS}
              pausedReason={pauseReason(refresh)}
              userPaused={refresh.paused}
              trouble={trouble}
              onInterval={refresh.setIntervalMs}
              onPause={refresh.setPaused}
              onRefreshNow={refreshNow}
            />
            <button
              type="button"
              onClick={toggleTheme}
              aria-label="Toggle light or dark theme"
              title="t"
              className="rounded border border-zinc-300 px-1.5 py-0.5 text-xs hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
            >
              Theme
            </button>
            <button
              type="button"
              onClick={() => setHelp(true)}
              aria-label="Keyboard shortcuts"
              className="rounded border border-zinc-300 px-1.5 py-0.5 text-xs hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
            >
              ?
            </button>
          </>
        }
      />
      {/* Focusable by script only: where the focus goes when a dialog closes and what opened it is gone (components/ui/dialog.tsx). */}
      <main tabIndex={-1} className="mx-auto max-w-7xl px-4 py-6 outline-none">
        {children}
      </main>
      {help && (
        <Dialog title="Keyboard shortcuts" onClose={() => setHelp(false)}>
          <ShortcutsHelp shortcuts={SHORTCUTS_HELP} clockOffsetMs={offset} />
        </Dialog>
      )}
    </>
  );
}
