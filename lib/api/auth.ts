/** Who is signed in, signing in and out, and what the console offers each role (the server decides; the console only disables what it would refuse). */
import { queryOptions } from '@tanstack/react-query';
import { type Role, roleAtLeast } from '@/lib/auth/roles';
import { roleNeeded } from '@/lib/ui/role-gate';
import { api } from './client';

export type { Role };

export interface Me {
  name: string;
  kind: 'user' | 'token' | 'anonymous';
  role: Role | null;
  authOff: boolean;
}

export const meQuery = () =>
  queryOptions({
    queryKey: ['auth', 'me'] as const,
    queryFn: ({ signal }) => api<Me>('/api/auth/me', { signal }),
    staleTime: 60_000,
    // Read again each minute while a page is open: a role an admin raised enables the buttons
    // it allows without a reload (one lowered is read again at the first 403: app/providers.tsx).
    refetchInterval: 60_000,
    retry: false,
  });

/** Why this role may not run this action (as the server will answer), or null. */
export function forbiddenFor(action: string, role: Role | null): string | null {
  if (role === null) return null; // still loading: the server decides
  const need = roleNeeded(action);
  return roleAtLeast(role, need) ? null : `Your role (${role}) may look but not ${action}: it needs ${need}.`;
}

export const signIn = (name: string, password: string) => api<{ user: { name: string; role: Role } }>('/api/auth/signin', { method: 'POST', json: { name, password } });
export const signOut = () => api<{ ok: true }>('/api/auth/signout', { method: 'POST', json: {} });
export const setupFirstAdmin = (token: string, name: string, password: string) =>
  api<{ user: { name: string; role: Role } }>('/api/auth/setup', { method: 'POST', json: { token, name, password } });
