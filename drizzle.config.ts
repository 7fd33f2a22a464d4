import { defineConfig } from 'drizzle-kit';

// Only `drizzle-kit migrate`/`studio` need a database; `generate` works offline.
export default defineConfig({
  dialect: 'postgresql',
  schema: './lib/db/schema.ts',
  out: './drizzle',
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/leasehold' },
});
