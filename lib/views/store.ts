/**
 * The saved_views table (0019): every statement that reads or writes it. A view is shared:
 * everyone who signs in lists every view; operators save them; a view's creator or an
 * admin deletes it. The route handlers (app/api/views) check the input (lib/http/schemas.ts)
 * and the role; the limits that need the table (a name taken, the cap) are checked here.
 */
import { type Principal, roleAtLeast } from '../auth/roles';
import type { Executor } from '../db/client';
import { QueueError } from '../queue/errors';
import { MAX_VIEWS_PER_PAGE, VIEW_PAGE_PATHS, type ViewPage } from './pages';

export interface SavedView {
  id: string;
  name: string;
  page: ViewPage;
  query: string;
  /** The user who saved it; null with sign-in off or through an API token. */
  createdBy: { id: string; name: string } | null;
  /** The API token that saved it (it may delete it too); null otherwise. */
  createdByToken: { id: string; name: string } | null;
  createdAt: Date;
}

const COLUMNS = `v.view_id, v.name, v.page, v.query, v.created_by, u.name AS created_by_name, v.created_by_token, t.name AS created_by_token_name, v.created_at`;
/** Who saved a view, by name: joined to the views (aliased v) wherever COLUMNS is read. */
const SAVERS = `LEFT JOIN users u ON u.user_id = v.created_by LEFT JOIN api_tokens t ON t.token_id = v.created_by_token`;

const toView = (r: any): SavedView => ({
  id: String(r.view_id),
  name: r.name,
  page: r.page,
  query: r.query,
  createdBy: r.created_by === null ? null : { id: String(r.created_by), name: r.created_by_name },
  createdByToken: r.created_by_token === null ? null : { id: String(r.created_by_token), name: r.created_by_token_name },
  createdAt: r.created_at,
});

/**
 * The name as the unique index compares it: Unicode's lower case, folded here rather than by
 * PostgreSQL's lower(), which under LC_CTYPE=C folds ASCII letters only ("Équipe" and
 * "équipe" would be two names). Names arrive in NFC (lib/http/schemas.ts viewName).
 */
const nameKey = (name: string) => name.toLowerCase();

/** A page's views (or every page's), by name as people read it (case aside), then by id. */
export async function viewList(db: Executor, page?: ViewPage): Promise<SavedView[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM saved_views v ${SAVERS}
      WHERE $1::text IS NULL OR v.page = $1
      ORDER BY v.page, v.name_key, v.view_id`,
    [page ?? null],
  );
  return rows.map(toView);
}

/**
 * Saves a view: 409 when the page has a view of this name (whatever its case), or already
 * MAX_VIEWS_PER_PAGE views. The cap is a bound against a runaway script, not an exact
 * count: two saves at the same moment on a page one short of it may both land.
 */
export async function viewSave(
  db: Executor,
  v: { name: string; page: ViewPage; query: string; createdBy: string | null; createdByToken?: string | null },
): Promise<SavedView> {
  const { rows } = await db.query(
    `WITH saved AS (
       INSERT INTO saved_views (name, name_key, page, query, created_by, created_by_token)
       SELECT $1, $6, $2, $3, $4::bigint, $7::bigint
        WHERE (SELECT count(*) FROM saved_views WHERE page = $2) < $5
       ON CONFLICT (page, name_key) DO NOTHING
       RETURNING *
     )
     SELECT ${COLUMNS} FROM saved v ${SAVERS}`,
    [v.name, v.page, v.query, v.createdBy, MAX_VIEWS_PER_PAGE, nameKey(v.name), v.createdByToken ?? null],
  );
  if (rows[0]) return toView(rows[0]);
  const { rows: taken } = await db.query(`SELECT name FROM saved_views WHERE page = $1 AND name_key = $2`, [v.page, nameKey(v.name)]);
  const where = VIEW_PAGE_PATHS[v.page];
  if (taken[0]) {
    throw new QueueError('state_forbids', `a view named ${JSON.stringify(taken[0].name)} exists on ${where} (names are compared without case): choose another name, or delete that view first`);
  }
  throw new QueueError('state_forbids', `${where} has ${MAX_VIEWS_PER_PAGE} saved views, the most it keeps: delete one first`);
}

/**
 * Deletes a view if `by` may: its creator (`userId`, or `tokenId` for a view saved through an
 * API token), or an admin (`admin`). 404 for no such view, 403 for someone else's; the check
 * and the delete are one statement, so what is deleted is the view that was checked.
 */
export async function viewDelete(db: Executor, id: string, by: { userId: string | null; tokenId?: string | null; admin: boolean }): Promise<SavedView> {
  const { rows } = await db.query(
    `WITH gone AS (
       DELETE FROM saved_views WHERE view_id = $1::bigint AND ($2::boolean OR created_by = $3::bigint OR created_by_token = $4::bigint) RETURNING *
     )
     SELECT ${COLUMNS} FROM gone v ${SAVERS}`,
    [id, by.admin, by.userId, by.tokenId ?? null],
  );
  if (rows[0]) return toView(rows[0]);
  const { rows: kept } = await db.query(`SELECT name FROM saved_views WHERE view_id = $1::bigint`, [id]);
  if (!kept[0]) throw new QueueError('not_found', `no saved view with id ${id}`);
  throw new QueueError('forbidden', `view ${JSON.stringify(kept[0].name)} was saved by someone else: only they or an admin may delete it`);
}

/**
 * Whether `who` may delete the view (the console shows × only then): an admin, or the
 * operator (user or token) who saved it. Viewers delete nothing, their own views of before a
 * demotion included.
 */
export const mayDeleteView = (v: SavedView, who: Principal): boolean =>
  roleAtLeast(who.role, 'admin') ||
  (roleAtLeast(who.role, 'operator') && ((v.createdBy !== null && v.createdBy.id === who.userId) || (v.createdByToken !== null && v.createdByToken.id === who.tokenId)));
