import { priorityMeaning } from '@/lib/api/priority';
import { Badge } from '../ui/badge';

/** A job's priority, as a list shows it next to the type (only when it is not the default). */
export function PriorityBadge({ priority }: { priority: number }) {
  return (
    <span data-testid="priority">
      <Badge title={`priority ${priority}: ${priorityMeaning(priority)}`}>p{priority}</Badge>
    </span>
  );
}
