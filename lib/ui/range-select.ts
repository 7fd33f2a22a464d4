/**
 * The rows a shift-click ticks: every row from the one last clicked to this one, as listed,
 * but not the greyed ones between them (no longer matching the view), as "select all" leaves
 * them out: a retrying job that started since would be cancelled mid-run by a range and
 * Cancel. The row clicked is ticked whatever it is, as a plain click ticks it.
 */
export function rangeIds(rows: readonly { id: string; gone?: boolean }[], fromId: string, toId: string): string[] | null {
  const order = rows.map((r) => r.id);
  const from = order.indexOf(fromId);
  const to = order.indexOf(toId);
  if (from < 0 || to < 0) return null;
  const [a, b] = from < to ? [from, to] : [to, from];
  return rows.slice(a, b + 1).filter((r) => !r.gone || r.id === toId).map((r) => r.id);
}
