/**
 * Where to go after signing in: the `next` the sign-in page was given, only when it is a
 * path on this console, else "/" — never an open redirect.
 *
 * A pattern over the raw text cannot decide it: the URL parser the browser navigates with
 * drops tabs and newlines anywhere and reads "\" as "/", so "/\t/evil.example" and "/\\evil"
 * are "//evil.example" and "//evil", hosts of their own. So the text is resolved the way
 * the browser will resolve it, and kept only when it stays on `origin`; what is returned
 * is the resolved path, the very URL that was checked — unless it begins with "//", which
 * the browser would take for another host.
 */
export function safeNext(next: string | null | undefined, origin: string): string {
  // Only a path: not "https://…", "javascript:…", or a relative "jobs" (it would depend on /signin's own path).
  if (!next || !next.startsWith('/')) return '/';
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return '/';
  }
  if (url.origin !== origin) return '/';
  // A path that resolves to "//…" ("/.//evil.example" does: the dot segment goes) is read
  // again by the browser as a host of its own when navigated to.
  if (url.pathname.startsWith('//')) return '/';
  return `${url.pathname}${url.search}${url.hash}`;
}
