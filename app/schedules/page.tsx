import type { Metadata } from 'next';
import { SchedulesView } from './schedules-view';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Schedules' };

export default function SchedulesPage() {
  return <SchedulesView />;
}
