import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Nav } from '@/components/layout/nav';
import { Providers } from './providers';
import './globals.css';

export const metadata: Metadata = {
  title: 'Leasehold',
  description: 'Job queue console: states, leases, dead letter, and the actions to put them right.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-zinc-50 text-zinc-900 dark:bg-zinc-950 dark:text-zinc-100">
        <Providers>
          <Nav />
          <main className="mx-auto max-w-7xl px-4 py-6">{children}</main>
        </Providers>
      </body>
    </html>
  );
}
