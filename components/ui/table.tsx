import type { ReactNode } from 'react';
import { ScrollFrame } from './scroll-frame';

/** A column heading: its text, and what it means on hover. */
export type Heading = string | { label: string; title: string };

/** The bordered full-width table of a page's main list (workers, schedules): the frame and the headings; rows are the caller's. */
export function PageTable({ testid, headings, children }: { testid: string; headings: readonly Heading[]; children: ReactNode }) {
  return (
    <ScrollFrame className="rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <table className="w-full text-sm" data-testid={testid}>
        <thead className="border-b border-zinc-200 text-left text-xs uppercase tracking-wide text-zinc-500 dark:border-zinc-800">
          <tr>
            {headings.map((h) =>
              typeof h === 'string' ? (
                <th key={h} className="px-3 py-2">
                  {h}
                </th>
              ) : (
                <th key={h.label} className="px-3 py-2" title={h.title}>
                  {h.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </ScrollFrame>
  );
}
