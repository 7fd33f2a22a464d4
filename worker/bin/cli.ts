/**
 * npx leasehold <verb> — the command line. Every action calls the same lib/queue
 * functions as the worker, the API and the console. The verbs live in worker/cli/.
 *
 * Exit codes (also in every verb's --help and the README): 0 done; 1 refused for some or
 * all items (state forbids, not found); 2 bad usage or invalid input; 3 the database is
 * unreachable; 70 an unexpected error.
 */
import { Command, CommanderError } from 'commander';
import { loadConfig } from '../../lib/config';
import { addActionCommands } from '../cli/actions';
import { EXIT, EXIT_CODES_HELP, examplesHelp, log, reportError } from '../cli/common';
import { addEnqueueCommand } from '../cli/enqueue';
import { addReadCommands } from '../cli/jobs';
import { addControlCommands } from '../cli/controls';
import { addAccessCommands } from '../cli/access';
import { resolveServices } from '../bootstrap';
import { addWorkerOptions, runWorkers, type WorkerCommandOptions } from './worker';
import { visible } from '../../lib/ui/visible';

// `leasehold status | head -1`: the reader went away, and the rest of the output has
// nowhere to go — stop quietly, as other command-line tools do, not with a stack.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0); // a refusal already counted keeps its code
  throw err;
});

const program = new Command('leasehold')
  .description('Leasehold job queue: enqueue, inspect and put jobs right from the command line.')
  .version(process.env.npm_package_version ?? '0.1.0', '-V, --version')
  .showHelpAfterError('(add --help for usage)')
  // Commander repeats a bad argument in its message: shown as the CLI shows all text, so an
  // escape sequence pasted into an argument does not act on the terminal.
  .configureOutput({ outputError: (text, write) => write(visible(text, { multiline: true })) })
  .exitOverride()
  .addHelpText(
    'after',
    `
Configuration comes from the environment as for the console and workers:
DATABASE_URL (else the embedded PostgreSQL under .leasehold/), REDIS_URL,
LEASEHOLD_REDIS_PREFIX.
${EXIT_CODES_HELP}`,
  );

program
  .command('migrate')
  .description('apply the database migrations (safe when several processes run it at once)')
  .addHelpText('after', examplesHelp('DATABASE_URL=postgres://app@db/leasehold npx leasehold migrate'))
  .action(async () => {
    const cfg = loadConfig();
    const services = await resolveServices(cfg, log);
    try {
      // Loaded here: drizzle's migrator is about 200 modules every other verb can do without.
      const { runMigrations } = await import('../../lib/db/migrate');
      await runMigrations(services.databaseUrl);
    } finally {
      await services.embedded?.stop();
    }
    console.log('migrations applied');
  });

addEnqueueCommand(program);
addReadCommands(program);
addActionCommands(program);
addControlCommands(program);
addAccessCommands(program);

addWorkerOptions(program.command('worker').description('run worker processes under a supervisor (as npm run worker)'))
  .addHelpText('after', examplesHelp('npx leasehold worker -p 2 -c 10 -q default,mail', 'LEASEHOLD_HANDLERS=./jobs.ts npx leasehold worker --prefetch 40'))
  .action(async (o: WorkerCommandOptions) => {
    await runWorkers(o);
    await new Promise(() => {}); // runs until a signal: its stop ends the process
  });

// Node decodes the command line leniently: a byte that is not UTF-8 (a Latin-1 "é") reaches
// us as U+FFFD, so two idempotency keys differing in it would be one. Refused, as the API
// refuses such a body.
const garbled = process.argv.slice(2).findIndex((a) => a.includes('\uFFFD'));
if (garbled !== -1) {
  console.error(`argument ${garbled + 1} is not valid UTF-8 (or holds U+FFFD): pass text in UTF-8`);
  process.exit(EXIT.usage);
}

try {
  await program.parseAsync();
  // Done: everything the verb opened is closed. Exit rather than wait for the event loop to
  // empty: ioredis leaves a refused connection's connect timer armed, which held every verb
  // 2 s past its answer while Redis was down. (stdout and stderr are synchronous on Linux.)
  process.exit(process.exitCode ?? EXIT.ok);
} catch (err) {
  if (err instanceof CommanderError) {
    // --help and --version end here with 0; usage errors were printed by commander.
    process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage);
  }
  process.exit(reportError(err));
}
