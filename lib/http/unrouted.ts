/**
 * Answers for the requests no route handler takes, in the API's error shape: a path no
 * route serves (404, app/api/[[...path]]/route.ts) and a method a route does not serve
 * (405 with an Allow header). Next would answer them with its HTML page and an empty 405.
 * Neither asks who is calling: they tell nothing that /api/openapi.json does not.
 */
import { QueueError } from '../queue/errors';
import { json } from './respond';

/** The methods a route file exports (Next answers HEAD from GET, and OPTIONS unless exported). */
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
type Handler = (req?: Request) => Promise<Response>;

const unrouted = new WeakSet<Handler>();
/** True for a handler made here: it is no operation of the API (test/api-routes.ts leaves it out). */
export const isUnroutedHandler = (fn: unknown) => unrouted.has(fn as Handler);
const mark = (fn: Handler) => (unrouted.add(fn), fn);

const answer = (e: QueueError, headers?: HeadersInit) => json(e.toJSON(), e.httpStatus, headers);

/**
 * The handlers a route file does not have, each a 405 naming the methods it has; and
 * OPTIONS, which Next would otherwise answer listing these too:
 *
 *   export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods('GET', 'POST');
 */
export function otherMethods<S extends Method>(...served: S[]): Record<Exclude<Method, S> | 'OPTIONS', Handler> {
  const has = new Set<Method>(served);
  const allow = [...has, ...(has.has('GET') ? ['HEAD'] : []), 'OPTIONS'].sort().join(', ');
  const refuse = mark(async (req) => answer(new QueueError('method_not_allowed', `${req?.method ?? 'this method'} is not served here; allowed: ${allow}`), { allow }));
  const out: Record<string, Handler> = { OPTIONS: mark(async () => new Response(null, { status: 204, headers: { allow } })) };
  for (const m of METHODS) if (!has.has(m)) out[m] = refuse;
  return out as Record<Exclude<Method, S> | 'OPTIONS', Handler>;
}

/** Every method of a path no route serves: 404. */
export function unknownPath(): Record<Method | 'OPTIONS', Handler> {
  const notFound = mark(async (req) => {
    const path = req ? new URL(req.url).pathname : '';
    return answer(new QueueError('not_found', `no API endpoint at ${JSON.stringify(path.slice(0, 200))}; see /api/openapi.json`));
  });
  return { GET: notFound, POST: notFound, PUT: notFound, PATCH: notFound, DELETE: notFound, OPTIONS: notFound };
}
