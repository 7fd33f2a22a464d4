'use client';
import { ago, duration } from '@/lib/ui/format';

export interface RefreshControlProps {
  intervalMs: number;
  intervals: readonly number[];
  /** Why refresh is paused (null while live). */
  pausedReason: string | null;
  userPaused: boolean;
  /** The server stopped answering this page's refreshes (useConnectionTrouble): since when it last did, and whether they hang rather than fail. */
  trouble?: { lastAnswerAt: number | null; now: number; hanging?: boolean } | null;
  onInterval(ms: number): void;
  onPause(p: boolean): void;
  onRefreshNow(): void;
}

/** Live refresh: interval, pause/resume, refresh now, and why it is paused. */
export function RefreshControl(p: RefreshControlProps) {
  return (
    <div className="flex flex-wrap items-center gap-1.5 text-xs" data-testid="refresh-control">
      <span
        className={`inline-block h-2 w-2 rounded-full ${p.pausedReason ? 'bg-zinc-400' : p.trouble ? 'bg-red-500' : 'animate-pulse bg-emerald-500'}`}
        aria-hidden="true"
      />
      <span
        className={!p.pausedReason && p.trouble ? 'font-medium text-red-700 dark:text-red-400' : 'text-zinc-500 dark:text-zinc-400'}
        data-testid="refresh-state"
      >
        {p.pausedReason
          ? `Refresh ${p.pausedReason}`
          : p.trouble
            ? `${p.trouble.hanging ? 'Server not answering' : 'Refresh failing'} · last update ${p.trouble.lastAnswerAt ? ago(p.trouble.now - p.trouble.lastAnswerAt) : 'never'}`
            : `Live · every ${duration(p.intervalMs)}`}
      </span>
      <select
        aria-label="Refresh interval"
        className="rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-950"
        value={p.intervalMs}
        onChange={(e) => p.onInterval(Number(e.target.value))}
      >
        {p.intervals.map((ms) => (
          <option key={ms} value={ms}>
            {duration(ms)}
          </option>
        ))}
      </select>
      <button
        type="button"
        onClick={() => p.onPause(!p.userPaused)}
        className="rounded border border-zinc-300 px-1.5 py-0.5 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
        title="p"
      >
        {p.userPaused ? 'Resume' : 'Pause'}
      </button>
      <button
        type="button"
        onClick={p.onRefreshNow}
        className="rounded border border-zinc-300 px-1.5 py-0.5 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
        title="r"
      >
        Refresh now
      </button>
    </div>
  );
}
