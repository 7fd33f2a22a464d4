import { OverviewView } from './overview-view';

export default function OverviewPage() {
  return <OverviewView />;
}
