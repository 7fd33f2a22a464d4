import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { isJobIdText } from '@/lib/queue/job';
import { JobView } from './job-view';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const { id } = await params;
  // The id as given is user text in a title: digits only, or no number at all.
  return { title: isJobIdText(id) ? `Job #${id}` : 'No such job' };
}

export default async function JobPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  // Not a job id at all (/jobs/abc): a 404, as a link checker or a script expects, rather
  // than a page that loads and then says the API refused the id. A well-formed id of a job
  // that does not exist is told by the view, which also sees it deleted while open.
  if (!isJobIdText(id)) notFound();
  return <JobView id={id} />;
}
