import { Kbd } from '../ui/states';

export function ShortcutsHelp({ shortcuts, clockOffsetMs }: { shortcuts: [string, string][]; clockOffsetMs: number }) {
  return (
    <div className="space-y-4 text-sm">
      <table className="w-full">
        <tbody>
          {shortcuts.map(([k, what]) => (
            <tr key={k}>
              <td className="py-1 pr-4">
                {k.split(' ').map((p, i) => (
                  <span key={i}>
                    {i > 0 && ' then '}
                    <Kbd>{p}</Kbd>
                  </span>
                ))}
              </td>
              <td className="py-1">{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="text-xs text-zinc-500">
        Lease countdowns and heartbeat ages use the database&apos;s clock: this browser&apos;s clock is{' '}
        {Math.abs(clockOffsetMs) < 50 ? 'in step with it' : `${(Math.abs(clockOffsetMs) / 1000).toFixed(1)} s ${clockOffsetMs > 0 ? 'behind' : 'ahead of'} it (corrected)`}.
      </p>
    </div>
  );
}
