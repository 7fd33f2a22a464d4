/** Roles and what each may do. Shared by the server gate, the CLI and the console (no server imports). */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Token scopes: a role, or `enqueue` (POST /api/jobs only: producers). */
export const TOKEN_SCOPES = ['enqueue', ...ROLES] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * What a route requires: `public` (no sign-in: liveness, sign-in itself), a role (that
 * role or a higher one), or `enqueue` (an enqueue-scoped token, or an operator or admin).
 */
export type Requirement = 'public' | 'enqueue' | Role;

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

export const roleAtLeast = (have: Role | null, need: Role) => have !== null && RANK[have] >= RANK[need];

/** The token scopes a role may not use itself: a token carrying one would outrank its maker after a demotion. */
export const SCOPES_ABOVE: Record<Role, readonly TokenScope[]> = { admin: [], operator: ['admin'], viewer: ['enqueue', 'operator', 'admin'] };

export interface Principal {
  kind: 'user' | 'token' | 'anonymous';
  /** The user's or token's name ("auth off" when sign-in is off). */
  name: string;
  /** null for an enqueue-only token. */
  role: Role | null;
  enqueue: boolean;
  /** How the request proved who it is: a cookie session needs the CSRF checks. */
  via: 'cookie' | 'bearer' | 'off';
  userId?: string;
  tokenId?: string;
}

export function allows(p: Principal, need: Requirement): boolean {
  if (need === 'public') return true;
  if (need === 'enqueue') return p.enqueue || roleAtLeast(p.role, 'operator');
  return roleAtLeast(p.role, need);
}
