import type { TokenDto, UserDto } from '@/lib/api/admin';
import type { Role } from '@/lib/api/auth';
import { dateTime } from '@/lib/ui/format';
import { Button } from '../ui/button';

const cell = 'px-2 py-1';

const ROLE_OPTIONS: Role[] = ['viewer', 'operator', 'admin'];

/** The users; an active one's role is a select whose change the page confirms first (onRole), so the select shows the role as it stands until then. */
export function UserTable({ users, me, onDisable, onRole }: { users: UserDto[]; me: string; onDisable(name: string): void; onRole(name: string, role: Role): void }) {
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
            <td className={cell}>
              {u.disabledAt ? (
                u.role
              ) : (
                <select
                  value={u.role}
                  onChange={(e) => onRole(u.name, e.target.value as Role)}
                  aria-label={`Role of ${u.name}`}
                  className="rounded border border-zinc-300 bg-white px-1 py-0.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
                >
                  {ROLE_OPTIONS.map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
              )}
            </td>
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
