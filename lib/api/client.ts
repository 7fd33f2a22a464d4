/** Browser-side fetch wrapper: JSON in, JSON out, API errors as ApiError. No server imports. */
import { noteServerTime } from './clock';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * `clock: true` for responses whose `dbNow` is the database's now() at the time of the
 * request (lists, lookups, details): they correct the browser's clock offset.
 */
export async function api<T>(path: string, init?: RequestInit & { json?: unknown; clock?: boolean }): Promise<T> {
  const { json, clock, ...rest } = init ?? {};
  const sentAt = Date.now();
  let res: Response;
  try {
    res = await fetch(path, {
      ...rest,
      // x-leasehold-request: a custom header makes every call a non-simple request (CSRF, lib/auth/gate.ts).
      headers: { accept: 'application/json', 'x-leasehold-request': '1', ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...rest.headers },
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'the console server did not answer (is `npm start` still running?)');
  }
  const body = await res.json().catch(() => null);
  const receivedAt = Date.now();
  if (res.status === 401 && typeof window !== 'undefined' && !['/signin', '/setup'].includes(window.location.pathname)) {
    // The session ended (expired, signed out elsewhere, user disabled): sign in again, then come back.
    window.location.assign(`/signin?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
  }
  if (!res.ok) {
    const err = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, err?.code ?? 'http_error', err?.message ?? `HTTP ${res.status}`, body);
  }
  if (clock) noteServerTime((body as { dbNow?: string } | null)?.dbNow, sentAt, receivedAt);
  return body as T;
}
