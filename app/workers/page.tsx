import type { Metadata } from 'next';
import { WorkersView } from './workers-view';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Workers' };

export default function WorkersPage() {
  return <WorkersView />;
}
