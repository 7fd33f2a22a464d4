'use client';
/** /admin — operators and API tokens (admins; the API refuses everyone else). The same as `npx leasehold user|token …`. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { TokenTable, UserTable } from '@/components/admin/access-tables';
import { ConfirmDialog } from '@/components/actions/confirm-dialog';
import { Button } from '@/components/ui/button';
import { Card, ErrorState } from '@/components/ui/states';
import { addUser, createToken, disableUser, revokeToken, setUserRole, tokensQuery, usersQuery, type TokenDto, type UserDto } from '@/lib/api/admin';
import { roleAtLeast, SCOPES_ABOVE } from '@/lib/auth/roles';
import { meQuery, type Role } from '@/lib/api/auth';
import { UserText } from '@/components/ui/user-text';

const input = 'rounded border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-950';

/** What a destructive click would do, said before it is done (a misclicked Disable ends a producer's token). */
interface Confirm {
  title: string;
  body: ReactNode;
  verb: string;
  /** A change that takes nothing away (a promotion) is confirmed with a plain button, not a red one. */
  safe?: boolean;
  /** `reason`: the admin's why, for the audit log. */
  run(reason: string | undefined): Promise<unknown>;
}

export function AdminView() {
  const me = useQuery(meQuery());
  const isAdmin = me.data?.role === 'admin';
  const users = useQuery({ ...usersQuery(), enabled: isAdmin });
  const tokens = useQuery({ ...tokensQuery(), enabled: isAdmin });
  const qc = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: ['admin'] });
    void qc.invalidateQueries({ queryKey: ['auth'] }); // an admin who changed their own role
  };
  const mutate = useMutation({
    mutationFn: (f: () => Promise<unknown>) => f(),
    onSuccess: refresh,
  });
  if (me.data && !isAdmin) return <ErrorState title="Admins only" message={`Your role (${me.data.role ?? 'none'}) may not manage users and tokens.`} />;
  return (
    <div className="space-y-6">
      <h1 className="text-xl font-semibold">Users and tokens</h1>
      {mutate.error && (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          <UserText text={mutate.error.message} />
        </p>
      )}
      <Card title="Operators">
        {users.error ? <ErrorState title="Could not load the users" message={users.error.message} /> : <UserTable
            users={users.data?.users ?? []}
            me={me.data?.name ?? ''}
            onDisable={(n) => setConfirm(disableConfirm(n, tokens.data?.tokens ?? null))}
            onRole={(n, role) => {
              const u = users.data?.users.find((x) => x.name === n);
              if (u && u.role !== role) setConfirm(roleConfirm(u, role, tokens.data?.tokens ?? null, n === me.data?.name));
            }}
          />}
        <form
          className="mt-3 flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const fd = new FormData(form);
            mutate.mutate(async () => {
              await addUser({ name: String(fd.get('name')), role: String(fd.get('role')) as Role, password: String(fd.get('password')) });
              form.reset();
            });
          }}
        >
          <input name="name" placeholder="name" required maxLength={64} className={input} aria-label="New user name" />
          <select name="role" className={input} aria-label="New user role" defaultValue="viewer">
            <option>viewer</option>
            <option>operator</option>
            <option>admin</option>
          </select>
          <input name="password" type="password" placeholder="password (10+)" required minLength={10} maxLength={200} autoComplete="new-password" className={input} aria-label="New user password" />
          <Button type="submit">Add user</Button>
        </form>
      </Card>
      <Card title="API tokens">
        {tokens.error ? <ErrorState title="Could not load the tokens" message={tokens.error.message} /> : <TokenTable tokens={tokens.data?.tokens ?? []} onRevoke={(id) => setConfirm(revokeConfirm(id, tokens.data?.tokens ?? []))} />}
        <form
          className="mt-3 flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const fd = new FormData(form);
            mutate.mutate(async () => {
              const t = await createToken({ name: String(fd.get('name')), scope: String(fd.get('scope')) as TokenDto['scope'] });
              setSecret(t.token);
              form.reset();
            });
          }}
        >
          <input name="name" placeholder="what it is for" required maxLength={64} className={input} aria-label="New token name" />
          <select name="scope" className={input} aria-label="Scope" defaultValue="enqueue">
            <option>enqueue</option>
            <option>viewer</option>
            <option>operator</option>
            <option>admin</option>
          </select>
          <Button type="submit">Create token</Button>
        </form>
        {secret && (
          <p className="mt-3 rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-900 dark:border-amber-900 dark:bg-amber-950 dark:text-amber-100" data-testid="new-token">
            Shown once, store it now: <code className="break-all font-mono">{secret}</code>
          </p>
        )}
      </Card>
      {confirm && (
        <ConfirmDialog
          key={confirm.title}
          title={confirm.title}
          confirmLabel={confirm.verb}
          tone={confirm.safe ? 'primary' : 'danger'}
          cancelLabel="Keep it"
          testId="admin-confirm"
          pending={false}
          onClose={() => setConfirm(null)}
          onConfirm={(reason) => {
            setConfirm(null);
            mutate.mutate(() => confirm.run(reason));
          }}
        >
          {confirm.body}
        </ConfirmDialog>
      )}
    </div>
  );
}

/** `tokens` null: the token list is not read (yet, or it failed): nothing is said of it that may be false. */
function disableConfirm(name: string, tokens: TokenDto[] | null): Confirm {
  const made = (tokens ?? []).filter((t) => t.owner === name && !t.revokedAt);
  return {
    title: `Disable ${name}?`,
    verb: `Disable ${name}`,
    run: (reason) => disableUser(name, reason),
    body: (
      <>
        <p>
          <UserText text={name} /> is signed out everywhere at once and can no longer sign in.
        </p>
        <p>
          {made.length
            ? `The ${made.length} live API token${made.length === 1 ? '' : 's'} they made ${made.length === 1 ? 'is' : 'are'} revoked with them (and any made by those tokens): `
            : tokens
              ? 'Any API token they made is revoked with them (none is live now).'
              : 'Every API token they made is revoked with them (the token list could not be read to name them).'}
          {made.map((t, k) => (
            <span key={t.id}>
              {k > 0 && ', '}
              <code className="font-mono">{t.id}</code> (<UserText text={t.name} />, {t.scope})
            </span>
          ))}
          {made.length > 0 && '. A producer using one is refused from then on.'}
        </p>
      </>
    ),
  };
}

const MAY: Record<Role, string> = {
  viewer: 'read every page, and change nothing',
  operator: 'also requeue, cancel, recover, run bulk actions, pause and limit queues, and enqueue',
  admin: 'also delete jobs, and manage users and API tokens (this page)',
};

/** A role change, said before it is made: from what to what, what the user may then do, and what ends with a demotion. */
function roleConfirm(u: UserDto, to: Role, tokens: TokenDto[] | null, isMe: boolean): Confirm {
  const demotion = !roleAtLeast(to, u.role);
  const above = (tokens ?? []).filter((t) => t.owner === u.name && !t.revokedAt && SCOPES_ABOVE[to].includes(t.scope));
  return {
    title: `Change the role of ${u.name}?`,
    verb: `Make ${u.name} ${to}`,
    safe: !demotion,
    run: (reason) => setUserRole(u.name, to, reason),
    body: (
      <>
        <p className="font-medium" data-testid="role-change">
          <UserText text={u.name} />: {u.role} → {to}
        </p>
        <p>
          As {to === 'admin' ? 'an' : 'a'} {to}, they may {MAY[to]}. If signed in, they act with the new role from their next request: no need to sign in
          again.
        </p>
        {demotion && SCOPES_ABOVE[to].length > 0 && (
          <p>
            {above.length
              ? `The live API token${above.length === 1 ? '' : 's'} they made with a scope above ${to} ${above.length === 1 ? 'is' : 'are'} revoked with it: `
              : tokens
                ? `Any API token they made with a scope above ${to} is revoked with it (none is live now).`
                : `Every API token they made with a scope above ${to} is revoked with it (the token list could not be read to name them).`}
            {above.map((t, k) => (
              <span key={t.id}>
                {k > 0 && ', '}
                <code className="font-mono">{t.id}</code> (<UserText text={t.name} />, {t.scope})
              </span>
            ))}
          </p>
        )}
        {isMe && demotion && <p className="font-medium text-red-700 dark:text-red-300">This is you: you lose this page as soon as it is done.</p>}
      </>
    ),
  };
}

function revokeConfirm(id: string, tokens: TokenDto[]): Confirm {
  const t = tokens.find((x) => x.id === id);
  return {
    title: `Revoke token ${id}?`,
    verb: 'Revoke token',
    run: (reason) => revokeToken(id, reason),
    body: (
      <p>
        {t ? (
          <>
            <UserText text={t.name} /> ({t.scope} scope, {t.lastUsedAt ? `last used ${new Date(t.lastUsedAt).toLocaleString()}` : 'never used'}):{' '}
          </>
        ) : null}
        whatever uses it is refused (401) from the next request on. This cannot be undone; a new token has a new secret.
      </p>
    ),
  };
}
