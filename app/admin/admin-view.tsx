'use client';
/** /admin — operators and API tokens (admins; the API refuses everyone else). The same as `npx leasehold user|token …`. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { TokenTable, UserTable } from '@/components/admin/access-tables';
import { Button } from '@/components/ui/button';
import { Dialog } from '@/components/ui/dialog';
import { Card, ErrorState } from '@/components/ui/states';
import { addUser, createToken, disableUser, revokeToken, tokensQuery, usersQuery, type TokenDto } from '@/lib/api/admin';
import { meQuery, type Role } from '@/lib/api/auth';
import { UserText } from '@/components/ui/user-text';

const input = 'rounded border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-950';

/** What a destructive click would do, said before it is done (a misclicked Disable ends a producer's token). */
interface Confirm {
  title: string;
  body: ReactNode;
  verb: string;
  run(): Promise<unknown>;
}

export function AdminView() {
  const me = useQuery(meQuery());
  const isAdmin = me.data?.role === 'admin';
  const users = useQuery({ ...usersQuery(), enabled: isAdmin });
  const tokens = useQuery({ ...tokensQuery(), enabled: isAdmin });
  const qc = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const refresh = () => void qc.invalidateQueries({ queryKey: ['admin'] });
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
        {users.error ? <ErrorState title="Could not load the users" message={users.error.message} /> : <UserTable users={users.data?.users ?? []} me={me.data?.name ?? ''} onDisable={(n) => setConfirm(disableConfirm(n, tokens.data?.tokens ?? null))} />}
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
          <select name="role" className={input} aria-label="Role" defaultValue="viewer">
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
        <Dialog title={confirm.title} onClose={() => setConfirm(null)}>
          <div className="space-y-3 text-sm" data-testid="admin-confirm">
            {confirm.body}
            <div className="flex justify-end gap-2">
              <Button variant="default" onClick={() => setConfirm(null)}>
                Keep it
              </Button>
              <Button
                variant="danger"
                onClick={() => {
                  const c = confirm;
                  setConfirm(null);
                  mutate.mutate(c.run);
                }}
              >
                {confirm.verb}
              </Button>
            </div>
          </div>
        </Dialog>
      )}
    </div>
  );
}

/** `tokens` null: the token list is not read (yet, or it failed): nothing is said of it that may be false. */
function disableConfirm(name: string, tokens: TokenDto[] | null): Confirm {
  const made = (tokens ?? []).filter((t) => t.createdBy === name && !t.revokedAt);
  return {
    title: `Disable ${name}?`,
    verb: `Disable ${name}`,
    run: () => disableUser(name),
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

function revokeConfirm(id: string, tokens: TokenDto[]): Confirm {
  const t = tokens.find((x) => x.id === id);
  return {
    title: `Revoke token ${id}?`,
    verb: 'Revoke token',
    run: () => revokeToken(id),
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
