import type { Metadata } from 'next';
import { AdminView } from './admin-view';

/** The tab's title: several tabs of the console are told apart. */
export const metadata: Metadata = { title: 'Admin' };

export default function AdminPage() {
  return <AdminView />;
}
