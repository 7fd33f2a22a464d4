import { AdminView } from './admin-view';

export default function AdminPage() {
  return <AdminView />;
}
