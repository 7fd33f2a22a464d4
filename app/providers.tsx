'use client';

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState } from 'react';
import { ApiError } from '@/lib/api/client';
import { meQuery } from '@/lib/api/auth';
import { RefreshProvider } from '@/lib/ui/refresh';

export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(() => {
    // A 403 may mean the signed-in role changed (an admin demoted this user): read the role
    // again at once, so the buttons it disables follow now rather than when its cache ends.
    // Not for the role's own read: that would ask again for ever.
    const roleMayHaveChanged = (err: unknown, key?: readonly unknown[]) => {
      if (!(err instanceof ApiError) || err.status !== 403) return;
      if (key && JSON.stringify(key) === JSON.stringify(meQuery().queryKey)) return;
      void qc.invalidateQueries({ queryKey: meQuery().queryKey });
    };
    const qc: QueryClient = new QueryClient({
      queryCache: new QueryCache({ onError: (err, query) => roleMayHaveChanged(err, query.queryKey) }),
      mutationCache: new MutationCache({ onError: (err) => roleMayHaveChanged(err) }),
      defaultOptions: {
        queries: { staleTime: 500, refetchOnWindowFocus: true, retry: 1 },
      },
    });
    return qc;
  });
  // The page answers clicks and typing from here on: said on <html> for anyone who drives the
  // console (the browser tests wait for it, test/e2e/test.ts) rather than guessing at `load`.
  useEffect(() => {
    document.documentElement.dataset.hydrated = '';
  }, []);
  return (
    <QueryClientProvider client={client}>
      <RefreshProvider>{children}</RefreshProvider>
    </QueryClientProvider>
  );
}
