'use client';
/** /admin — operators and API tokens (admins; the API refuses everyone else). The same as `npx leasehold user|token …`. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { TokenTable, UserTable } from '@/components/admin/access-tables';
import { Button } from '@/components/ui/button';
import { Card, ErrorState } from '@/components/ui/states';
import { addUser, createToken, disableUser, revokeToken, tokensQuery, usersQuery, type TokenDto } from '@/lib/api/admin';
import { meQuery, type Role } from '@/lib/api/auth';
import { UserText } from '@/components/ui/user-text';

const input = 'rounded border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-950';

export function AdminView() {
  const me = useQuery(meQuery());
  const isAdmin = me.data?.role === 'admin';
  const users = useQuery({ ...usersQuery(), enabled: isAdmin });
  const tokens = useQuery({ ...tokensQuery(), enabled: isAdmin });
  const qc = useQueryClient();
  const [secret, setSecret] = useState<string | null>(null);
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
        {users.error ? <ErrorState title="Could not load the users" message={users.error.message} /> : <UserTable users={users.data?.users ?? []} me={me.data?.name ?? ''} onDisable={(n) => mutate.mutate(() => disableUser(n))} />}
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
        {tokens.error ? <ErrorState title="Could not load the tokens" message={tokens.error.message} /> : <TokenTable tokens={tokens.data?.tokens ?? []} onRevoke={(id) => mutate.mutate(() => revokeToken(id))} />}
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
    </div>
  );
}
