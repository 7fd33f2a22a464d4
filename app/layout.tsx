import type { Metadata } from 'next';
import { headers } from 'next/headers';
import Script from 'next/script';
import type { ReactNode } from 'react';
import { Providers } from './providers';
import { Shell } from './shell';
import './globals.css';

export const metadata: Metadata = {
  // "Jobs · Leasehold", "Job #31 · Leasehold": each page names itself (app/*/page.tsx).
  title: { default: 'Leasehold', template: '%s · Leasehold' },
  description: 'Job queue console: states, leases, dead letter, and the actions to put them right.',
};

/**
 * Rendered per request: proxy.ts gives every page a fresh CSP nonce (x-nonce), which Next
 * puts on its own scripts and we put on the theme script.
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  const nonce = (await headers()).get('x-nonce') ?? undefined;
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        <Script src="/theme-init.js" strategy="beforeInteractive" nonce={nonce} />
      </head>
      <body className="min-h-screen bg-zinc-50 text-zinc-900 dark:bg-zinc-950 dark:text-zinc-100">
        <Providers>
          <Shell>{children}</Shell>
        </Providers>
      </body>
    </html>
  );
}
