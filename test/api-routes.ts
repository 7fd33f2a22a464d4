/**
 * The route handlers under app/api, found on disk: what the OpenAPI conformance test
 * checks the document against (a route file the document does not describe fails it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isUnroutedHandler } from '../lib/http/unrouted';
import { root } from './processes';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface RouteFile {
  /** e.g. app/api/jobs/[id]/requeue/route.ts */
  file: string;
  /** The OpenAPI path: /api/jobs/{id}/requeue */
  path: string;
}

/** app/api/jobs/[id]/route.ts → /api/jobs/{id}; a catch-all [...slug] → {slug}; (group) folders vanish. */
export function openApiPathOf(file: string): string {
  const segments = path.dirname(file).split(path.sep).slice(1); // drop "app"
  return (
    '/' +
    segments
      .filter((s) => !/^\(.*\)$/.test(s))
      .map((s) => s.replace(/^\[\[?(?:\.\.\.)?([^\]]+)\]\]?$/, '{$1}'))
      .join('/')
  );
}

export function findRouteFiles(dir = path.join(root, 'app/api')): RouteFile[] {
  const out: RouteFile[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findRouteFiles(full));
    else if (/^route\.(ts|tsx|js|mjs)$/.test(e.name)) {
      const file = path.relative(root, full);
      out.push({ file, path: openApiPathOf(file) });
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/**
 * Each route file's exported HTTP method handlers: the API's operations. The 404 and 405
 * answers a route file exports for the paths and methods it does not serve
 * (lib/http/unrouted.ts) are none: the catch-all's route is listed with no methods.
 */
export async function loadRoutes(files = findRouteFiles()) {
  const routes: { path: string; file: string; methods: Map<string, Handler> }[] = [];
  for (const f of files) {
    const mod = (await import(path.join(root, f.file))) as Record<string, unknown>;
    const methods = new Map<string, Handler>();
    for (const m of HTTP_METHODS) if (typeof mod[m] === 'function' && !isUnroutedHandler(mod[m])) methods.set(m.toLowerCase(), mod[m] as Handler);
    routes.push({ ...f, methods });
  }
  return routes;
}

/** "GET /api/x" for every exported handler the document has no operation for. */
export function undocumented(
  routes: { path: string; methods: Map<string, unknown> }[],
  doc: { paths?: Record<string, Record<string, unknown> | undefined> },
): string[] {
  const out: string[] = [];
  for (const r of routes) for (const m of r.methods.keys()) if (!doc.paths?.[r.path]?.[m]) out.push(`${m.toUpperCase()} ${r.path}`);
  return out;
}

/** "GET /api/x" for every documented operation with no route handler behind it. */
export function unimplemented(
  routes: { path: string; methods: Map<string, unknown> }[],
  doc: { paths?: Record<string, Record<string, unknown> | undefined> },
): string[] {
  const out: string[] = [];
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    for (const m of Object.keys(item ?? {})) {
      if (!HTTP_METHODS.includes(m.toUpperCase() as never)) continue;
      if (!routes.find((r) => r.path === p)?.methods.has(m)) out.push(`${m.toUpperCase()} ${p}`);
    }
  }
  return out;
}
