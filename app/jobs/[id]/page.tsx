import type { Metadata } from 'next';
import { JobView } from './job-view';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const { id } = await params;
  // The id as given is user text in a title: digits only, or no number at all.
  return { title: /^[0-9]{1,19}$/.test(id) ? `Job #${id}` : 'Job' };
}

export default async function JobPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <JobView id={id} />;
}
