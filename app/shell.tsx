'use client';
/**
 * The frame around every page: navigation with the environment badge, live-refresh
 * control, theme switch, keyboard shortcuts and their help.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { type ReactNode, useState } from 'react';
import { Nav } from '@/components/layout/nav';
import { RefreshControl } from '@/components/layout/refresh-control';
import { ShortcutsHelp } from '@/components/layout/shortcuts-help';
import { Dialog } from '@/components/ui/dialog';
import { useClockOffset } from '@/lib/api/clock';
import { consoleMetaQuery } from '@/lib/api/console';
import { INTERVALS, pauseReason, useRefresh } from '@/lib/ui/refresh';
import { SHORTCUTS_HELP, useShortcuts } from '@/lib/ui/shortcuts';
import { useTheme } from '@/lib/ui/theme';

export function Shell({ children }: { children: ReactNode }) {
  const meta = useQuery(consoleMetaQuery());
  const refresh = useRefresh();
  const qc = useQueryClient();
  const router = useRouter();
  const [help, setHelp] = useState(false);
  const [, , toggleTheme] = useTheme();
  const offset = useClockOffset();
  const refreshNow = () => void qc.invalidateQueries({ predicate: (q) => q.queryKey[0] !== 'actions' });
  useShortcuts({
    '?': () => setHelp(true),
    '/': () => {
      const el = document.getElementById('job-search') as HTMLInputElement | null;
      if (el) el.focus();
      else router.push('/jobs?focus=search');
    },
    'g o': () => router.push('/'),
    'g j': () => router.push('/jobs'),
    'g r': () => router.push('/jobs?status=running'),
    'g d': () => router.push('/dead-letter'),
    'g w': () => router.push('/workers'),
    r: refreshNow,
    p: () => refresh.setPaused(!refresh.paused),
    t: toggleTheme,
  });
  return (
    <>
      <Nav
        environment={meta.data?.environment ?? null}
        right={
          <>
            <RefreshControl
              intervalMs={refresh.intervalMs}
              intervals={INTERVALS}
              pausedReason={pauseReason(refresh)}
              userPaused={refresh.paused}
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
      <main className="mx-auto max-w-7xl px-4 py-6">{children}</main>
      {help && (
        <Dialog title="Keyboard shortcuts" onClose={() => setHelp(false)}>
          <ShortcutsHelp shortcuts={SHORTCUTS_HELP} clockOffsetMs={offset} />
        </Dialog>
      )}
    </>
  );
}
