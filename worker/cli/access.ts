/**
 * `leasehold user …` and `leasehold token …`: operators and API tokens. Whoever can run
 * the CLI against the database is trusted (as with `psql`); every change is audited with
 * the OS user as the actor.
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { ROLES, TOKEN_SCOPES } from '../../lib/auth/roles';
import { checkPassword, tokenCreate, tokenList, tokenRevoke, userAdd, userDisable, userList, userSetRole } from '../../lib/auth/store';
import { QueueError } from '../../lib/queue/errors';
import { tokenDto, userDto } from '../../lib/http/admin-dto';
import { auditCli, cliActor, EXIT_CODES_HELP, examplesHelp, printJson, printTable, reasonArg, time, withQueue, withQueueReadOnly } from './common';

/** The password: --password-stdin (one line), or a prompt on a terminal, or a generated one (printed once). */
async function readPassword(o: { passwordStdin?: boolean; generate?: boolean }): Promise<{ password: string; generated: boolean }> {
  // Both given: which password was meant cannot be told (the one piped in was silently dropped).
  if (o.generate && o.passwordStdin) throw new QueueError('invalid_request', 'give --password-stdin or --generate, not both');
  if (o.generate) return { password: randomBytes(15).toString('base64url'), generated: true };
  if (!o.passwordStdin && !process.stdin.isTTY) {
    throw new QueueError('invalid_request', 'give --password-stdin (and the password on stdin), --generate, or run it in a terminal');
  }
  const rl = createInterface({ input: process.stdin, output: process.stdin.isTTY ? process.stderr : undefined, terminal: !!process.stdin.isTTY });
  if (process.stdin.isTTY) process.stderr.write('password (10 characters or more): ');
  const line = await new Promise<string>((resolve) => rl.once('line', resolve).once('close', () => resolve('')));
  rl.close();
  if (process.stdin.isTTY) process.stderr.write('\n');
  return { password: line.replace(/\r?\n$/, ''), generated: false };
}

export function addAccessCommands(program: Command) {
  const user = program.command('user').description('console and API operators (roles: viewer reads; operator also requeues, cancels, recovers; admin also deletes and manages users and tokens)');
  user
    .command('add')
    .description('add an operator (password hashed with scrypt, stored in PostgreSQL)')
    .argument('<name>', 'sign-in name')
    .requiredOption('--role <role>', ROLES.join(' | '))
    .option('--password-stdin', 'read the password from stdin (one line)')
    .option('--generate', 'generate a password and print it once')
    .option('--replace', 'set a new role and password when the user exists')
    .addHelpText('after', `\nExamples:\n  npx leasehold user add alice --role admin\n  echo "$PW" | npx leasehold user add ci --role viewer --password-stdin\n${EXIT_CODES_HELP}`)
    .action(async (name: string, o: { role: string; passwordStdin?: boolean; generate?: boolean; replace?: boolean }) => {
      const { password, generated } = await readPassword(o);
      checkPassword(password);
      const u = await withQueue(async (q) => {
        return auditCli(
          q.pool,
          { action: o.replace ? 'user.set' : 'user.add', target: { user: name }, details: { role: o.role } },
          () => userAdd(q.pool, { name, role: o.role, password, replace: o.replace }),
          (added) => ({ changed: 1, skipped: 0, target: { user: added.name }, ...(added.revokedTokens.length ? { details: { revokedTokens: added.revokedTokens } } : {}) }),
        );
      });
      console.log(`${u.name}: ${u.role}`);
      if (generated) console.log(`password: ${password}   (shown once: store it now)`);
    });
  user
    .command('set')
    .description("change a user's role; their sessions act with it from their next request (a demotion revokes the tokens they made with a scope above it)")
    .argument('<name>', 'sign-in name')
    .requiredOption('--role <role>', ROLES.join(' | '))
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .addHelpText('after', `\nExample:\n  npx leasehold user set bob --role admin --reason "on call this week"\n\nThe last active admin cannot be demoted (exit 1): make another admin first.\n${EXIT_CODES_HELP}`)
    .action(async (name: string, o: { role: string; reason?: string }) => {
      // Refused from inside the audited action (no such user, the last admin): no entry.
      const r = await withQueue((q) =>
        auditCli(
          q.pool,
          { action: 'user.set', target: { user: name }, details: { role: o.role }, reason: o.reason },
          () => userSetRole(q.pool, name, o.role),
          (c) => ({ changed: c.changed ? 1 : 0, skipped: c.changed ? 0 : 1, details: { from: c.from, revokedTokens: c.revokedTokens } }),
        ),
      );
      console.log(r.changed ? `${r.user.name}: ${r.from} → ${r.user.role}` : `${r.user.name}: already ${r.user.role}`);
      if (r.revokedTokens.length) console.log(`revoked the API tokens they made above ${r.user.role}: ${r.revokedTokens.join(', ')}`);
    });
  user
    .command('list')
    .description('the operators and their roles')
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('npx leasehold user list', 'npx leasehold user list --json'))
    .action(async (o: { json?: boolean }) => {
      const list = await withQueueReadOnly((q) => userList(q.pool));
      // As GET /api/admin/users answers.
      if (o.json) return printJson({ users: list.map(userDto) });
      if (!list.length) return console.log('no users: add the first admin with `npx leasehold user add NAME --role admin`');
      printTable(['name', 'role', 'created', 'disabled'], list.map((u) => [u.name, u.role, time(u.createdAt), time(u.disabledAt)]));
    });
  user
    .command('disable')
    .description('stop a user signing in; their sessions end at once')
    .argument('<name>', 'sign-in name')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .addHelpText('after', examplesHelp('npx leasehold user disable bob --reason "left the team"'))
    .action(async (name: string, o: { reason?: string }) => {
      // Refused from inside the audited action: a user who is not there leaves no entry.
      await withQueue((q) =>
        auditCli(
          q.pool,
          { action: 'user.disable', target: { user: name }, reason: o.reason },
          async () => {
            if (!(await userDisable(q.pool, name))) throw new QueueError('not_found', `no active user ${JSON.stringify(name)}`);
          },
          () => ({ changed: 1, skipped: 0 }),
        ),
      );
      console.log(`${name}: disabled`);
    });

  const token = program.command('token').description('API tokens for producers and scripts (sent as Authorization: Bearer lh_…)');
  token
    .command('create')
    .description('create a token; it is printed once and stored only as a hash')
    .requiredOption('--name <name>', 'what it is for, e.g. billing-producer (not all digits: that would read as an id)')
    .option('--scope <scope>', `${TOKEN_SCOPES.join(' | ')} (enqueue: POST /api/jobs only)`, 'enqueue')
    .option('--json', 'print JSON')
    .addHelpText('after', `\nExample:\n  npx leasehold token create --name billing --scope enqueue\n${EXIT_CODES_HELP}`)
    .action(async (o: { name: string; scope: string; json?: boolean }) => {
      const t = await withQueue(async (q) => {
        return auditCli(
          q.pool,
          { action: 'token.create', target: { name: o.name }, details: { scope: o.scope } },
          () => tokenCreate(q.pool, { name: o.name, scope: o.scope, createdBy: cliActor() }),
          (made) => ({ changed: 1, skipped: 0, target: { token: made.info.id, name: o.name } }),
        );
      });
      if (o.json) return printJson({ id: t.info.id, name: t.info.name, scope: t.info.scope, token: t.token });
      console.log(`token ${t.info.id} (${t.info.name}, scope ${t.info.scope}):\n${t.token}\n(shown once: store it now; revoke with \`npx leasehold token revoke ${t.info.id}\`)`);
    });
  token
    .command('list')
    .description('the tokens (never their secrets)')
    .option('--json', 'print JSON')
    .addHelpText('after', examplesHelp('npx leasehold token list', `npx leasehold token list --json | jq '.tokens[] | select(.revokedAt == null)'`))
    .action(async (o: { json?: boolean }) => {
      const list = await withQueueReadOnly((q) => tokenList(q.pool));
      // As GET /api/admin/tokens answers.
      if (o.json) return printJson({ tokens: list.map(tokenDto) });
      if (!list.length) return console.log('no tokens');
      printTable(
        ['id', 'name', 'scope', 'created by', 'created', 'last used', 'revoked'],
        list.map((t) => [t.id, t.name, t.scope, t.createdBy, time(t.createdAt), time(t.lastUsedAt), time(t.revokedAt)]),
      );
    });
  token
    .command('revoke')
    .description('revoke a token by id, or by name when one live token has it; it stops working on the next request')
    .argument('<id-or-name>', 'a token id (all digits), or a token name')
    .option('--all', 'revoke every live token with this name (without it, a name two live tokens share is refused)')
    .option('--reason <text>', 'why (kept in the audit log; at most 500 characters)', reasonArg)
    .addHelpText('after', examplesHelp('npx leasehold token revoke 4', 'npx leasehold token revoke billing --reason "leaked in a log"', 'npx leasehold token revoke billing --all'))
    .action(async (idOrName: string, o: { all?: boolean; reason?: string }) => {
      const revoked = await withQueue((q) =>
        auditCli(
          q.pool,
          { action: 'token.revoke', target: { token: idOrName }, reason: o.reason },
          async () => {
            const r = await tokenRevoke(q.pool, idOrName, { all: o.all });
            if (!r.length) throw new QueueError('not_found', `no live token ${JSON.stringify(idOrName)}`);
            return r;
          },
          (r) => ({ changed: r.length, skipped: 0 }),
        ),
      );
      for (const t of revoked) console.log(`token ${t.id} (${t.name}): revoked`);
    });
}
