import type { JobStatus } from '@/lib/api/statuses';
import { Badge, type Tone } from '../ui/badge';

export const STATUS_TONE: Record<JobStatus, Tone> = {
  queued: 'sky',
  running: 'amber',
  retrying: 'orange',
  completed: 'emerald',
  failed: 'red',
  cancelled: 'zinc',
};

export function StatusBadge({ status, cancelRequested }: { status: JobStatus; cancelRequested?: boolean }) {
  return (
    <span className="inline-flex items-center gap-1" data-testid="job-status">
      <Badge tone={STATUS_TONE[status]}>{status}</Badge>
      {status === 'running' && cancelRequested && <Badge tone="zinc">cancel requested</Badge>}
    </span>
  );
}
