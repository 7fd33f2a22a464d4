import type { TokenDto, UserDto } from '@/lib/api/admin';
import { dateTime } from '@/lib/ui/format';
import { Button } from '../ui/button';

const cell = 'px-2 py-1';

export function UserTable({ users, me, onDisable }: { users: UserDto[]; me: string; onDisable(name: string): void }) {
  return (
    <table className="w-full text-sm" data-testid="user-table">
      <thead className="text-left text-xs text-zinc-500">
        <tr>
          <th className={cell}>Name</th>
          <th className={cell}>Role</th>
          <th className={cell}>Created</th>
          <th className={cell} />
        </tr>
      </thead>
      <tbody>
        {users.map((u) => (
          <tr key={u.name} className="border-t border-zinc-100 dark:border-zinc-800">
            <td className={`${cell} break-all`}>{u.name}</td>
            <td className={cell}>{u.role}</td>
            <td className={`${cell} tabular text-xs text-zinc-500`}>{dateTime(u.createdAt)}</td>
            <td className={`${cell} text-right`}>
              {u.disabledAt ? (
                <span className="text-xs text-zinc-500">disabled</span>
              ) : (
                u.name !== me && (
                  <Button size="sm" variant="danger" onClick={() => onDisable(u.name)} aria-label={`Disable ${u.name}`}>
                    Disable
                  </Button>
                )
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function TokenTable({ tokens, onRevoke }: { tokens: TokenDto[]; onRevoke(id: string): void }) {
  return (
    <table className="w-full text-sm" data-testid="token-table">
      <thead className="text-left text-xs text-zinc-500">
        <tr>
          <th className={cell}>Id</th>
          <th className={cell}>Name</th>
          <th className={cell}>Scope</th>
          <th className={cell}>Created by</th>
          <th className={cell}>Last used</th>
          <th className={cell} />
        </tr>
      </thead>
      <tbody>
        {tokens.map((t) => (
          <tr key={t.id} className="border-t border-zinc-100 dark:border-zinc-800">
            <td className={`${cell} font-mono`}>{t.id}</td>
            <td className={`${cell} break-all`}>{t.name}</td>
            <td className={cell}>{t.scope}</td>
            <td className={`${cell} break-all text-xs`}>{t.createdBy}</td>
            <td className={`${cell} tabular text-xs text-zinc-500`}>{t.lastUsedAt ? dateTime(t.lastUsedAt) : '—'}</td>
            <td className={`${cell} text-right`}>
              {t.revokedAt ? (
                <span className="text-xs text-zinc-500">revoked</span>
              ) : (
                <Button size="sm" variant="danger" onClick={() => onRevoke(t.id)} aria-label={`Revoke token ${t.id}`}>
                  Revoke
                </Button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
