import { SchedulesView } from './schedules-view';

export default function SchedulesPage() {
  return <SchedulesView />;
}
