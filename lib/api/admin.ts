/** Users and tokens (admins only; the server refuses everyone else). */
import { queryOptions } from '@tanstack/react-query';
import { api } from './client';
import type { Role } from './auth';

export interface UserDto {
  name: string;
  role: Role;
  createdAt: string;
  disabledAt: string | null;
}
export interface TokenDto {
  id: string;
  name: string;
  scope: 'enqueue' | Role;
  createdBy: string;
  /** The user whose disable or demotion revokes it (null: made from the command line). */
  owner: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export const usersQuery = () => queryOptions({ queryKey: ['admin', 'users'] as const, queryFn: ({ signal }) => api<{ users: UserDto[] }>('/api/admin/users', { signal }) });
export const tokensQuery = () => queryOptions({ queryKey: ['admin', 'tokens'] as const, queryFn: ({ signal }) => api<{ tokens: TokenDto[] }>('/api/admin/tokens', { signal }) });

export const addUser = (b: { name: string; role: Role; password: string }) => api<UserDto>('/api/admin/users', { method: 'POST', json: b });
/** `reason`: the admin's why, kept in the audit log (as every action's). */
export const setUserRole = (name: string, role: Role, reason?: string) =>
  api<UserDto & { previousRole: Role; revokedTokens: string[] }>(`/api/admin/users/${encodeURIComponent(name)}`, { method: 'PATCH', json: { role, reason } });
export const disableUser = (name: string, reason?: string) => api<{ ok: true }>(`/api/admin/users/${encodeURIComponent(name)}/disable`, { method: 'POST', json: { reason } });
export const createToken = (b: { name: string; scope: TokenDto['scope'] }) => api<TokenDto & { token: string }>('/api/admin/tokens', { method: 'POST', json: b });
export const revokeToken = (id: string, reason?: string) => api<TokenDto>(`/api/admin/tokens/${encodeURIComponent(id)}/revoke`, { method: 'POST', json: { reason } });
