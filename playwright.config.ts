import { defineConfig, devices } from '@playwright/test';
import { e2eDatabaseUrl, e2eEnv } from './test/e2e/env';

/**
 * Browser tests: Debian's Chromium (no downloaded browser) against `npm start` with a
 * running worker, on a database of their own (created by test/e2e/prepare.ts).
 */
const port = Number(process.env.E2E_PORT ?? 3210);
/** A second console on the same database with sign-in on (test/e2e/auth/*.spec.ts); no workers of its own. */
const authPort = Number(process.env.E2E_AUTH_PORT ?? port + 1);

const chromium = {
  ...devices['Desktop Chrome'],
  launchOptions: {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  },
};

export default defineConfig({
  testDir: './test/e2e',
  testMatch: '**/*.spec.ts',
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 20_000 },
  reporter: 'list',
  outputDir: 'test-results',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'retain-on-failure',
  },
  projects: [
    { name: 'debian-chromium', testIgnore: 'auth/**', use: chromium },
    { name: 'auth-on', testMatch: 'auth/**/*.spec.ts', use: { ...chromium, baseURL: `http://127.0.0.1:${authPort}` } },
  ],
  webServer: [
    {
      command: 'node --import tsx worker/bin/start.ts --processes 2 --concurrency 5',
      url: `http://127.0.0.1:${port}/api/health`,
      reuseExistingServer: false,
      timeout: 180_000,
      stdout: 'ignore',
      stderr: 'pipe',
      env: { ...e2eEnv(), PORT: String(port), DATABASE_URL: e2eDatabaseUrl() },
    },
    {
      command: 'node --import tsx worker/bin/start.ts --no-worker',
      url: `http://127.0.0.1:${authPort}/api/health`,
      reuseExistingServer: false,
      timeout: 180_000,
      stdout: 'ignore',
      stderr: 'pipe',
      env: { ...e2eEnv(), LEASEHOLD_AUTH: 'on', PORT: String(authPort), DATABASE_URL: e2eDatabaseUrl() },
    },
  ],
});
