import Link from 'next/link';
import { UserText } from '../ui/user-text';

/** A worker process's id, linked to the jobs it runs or ran last (`/jobs?worker=`). */
export function WorkerLink({ workerId }: { workerId: string | null }) {
  if (!workerId) return <UserText text={workerId} />;
  return (
    <Link href={`/jobs?worker=${encodeURIComponent(workerId)}`} className="hover:underline" title="the jobs this worker process runs or ran last">
      <UserText text={workerId} />
    </Link>
  );
}
