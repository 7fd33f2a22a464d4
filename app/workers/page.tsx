import { WorkersView } from './workers-view';

export default function WorkersPage() {
  return <WorkersView />;
}
