/** Users and tokens as the API shows them (never a hash). */
import type { ApiToken, User } from '../auth/store';

export const userDto = (u: User) => ({
  name: u.name,
  role: u.role,
  createdAt: u.createdAt.toISOString(),
  disabledAt: u.disabledAt?.toISOString() ?? null,
});

export const tokenDto = (t: ApiToken) => ({
  id: t.id,
  name: t.name,
  scope: t.scope,
  createdBy: t.createdBy,
  owner: t.owner,
  createdAt: t.createdAt.toISOString(),
  lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
  revokedAt: t.revokedAt?.toISOString() ?? null,
});
