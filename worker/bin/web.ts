/** npm run web — the console only (migrates and builds first when needed). */
import { loadConfig } from '../../lib/config';
import { runMigrations } from '../../lib/db/migrate';
import { createLogger } from '../../lib/log';
import { redact, resolveServices } from '../bootstrap';
import { ensureBuild, spawnWeb } from '../web';
import { childEnv } from './worker';

const log = createLogger({ role: 'web' });
const cfg = loadConfig();
const services = await resolveServices(cfg, log);
await runMigrations(services.databaseUrl);
ensureBuild(log);
const host = process.env.HOST ?? '127.0.0.1';
const child = spawnWeb({
  port: cfg.port,
  host,
  env: { ...process.env, ...childEnv(cfg), DATABASE_URL: services.databaseUrl, REDIS_URL: services.redisUrl ?? 'off' },
});
log.info('console starting', { url: `http://${host}:${cfg.port}`, postgres: redact(services.databaseUrl), redis: services.redisUrl ?? 'none' });
const stop = async () => {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await services.embedded?.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
child.on('exit', (code) => {
  log.warn('console exited', { code });
  void services.embedded?.stop().then(() => process.exit(code ?? 1));
});
