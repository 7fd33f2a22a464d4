/**
 * Runs once when the console's server starts (not during `next build`): see warmUpStats.
 * Not awaited: the server takes requests at once.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs' || process.env.NEXT_PHASE === 'phase-production-build') return;
  const { warmUpStats } = await import('./lib/server/context');
  warmUpStats();
}
