/**
 * `otpd db copy --to postgres://…`: moves a SQLite deployment to PostgreSQL
 * (store/copy-to-pg.ts), then says what every node's config needs.
 */
import { resolve } from 'node:path'
import { Command } from 'commander'
import { systemClock } from '../lib/clock.ts'
import { copyDatabaseToPostgres } from '../store/copy-to-pg.ts'
import { secretPath } from '../store/secret.ts'
import { load, printJson, printTable, subcommand, type CommonOptions } from './common.ts'

export function dbCommand(): Command {
  const db = new Command('db').description('move the database between engines')
  subcommand(
    db,
    'copy',
    "copy this config's SQLite database into an empty PostgreSQL database (stop otpd first)",
    'otpd db copy --to postgres://otpd@db.internal:5432/otpd',
    'PGPASSWORD=... otpd db copy --to postgres://otpd@db.internal/otpd --json',
  )
    .requiredOption('--to <url>', 'the PostgreSQL database: postgres://user@host:5432/database (password from --password-env, the URL, or PGPASSWORD)')
    .option('--password-env <name>', 'an environment variable holding the PostgreSQL password')
    .action((opts: CommonOptions & { to: string; passwordEnv?: string }) => copy(opts))
  return db
}

async function copy(opts: CommonOptions & { to: string; passwordEnv?: string }): Promise<void> {
  const { config, env } = load(opts)
  const { from, to, result } = await copyDatabaseToPostgres(config, env, { to: opts.to, passwordEnv: opts.passwordEnv, now: systemClock.now() })
  // Where the secret is, never its value: every node needs that same secret.
  const secret =
    config.server.secret !== undefined
      ? { setting: 'server.secret', hint: 'set the same server.secret on every node' }
      : config.server.secret_env !== undefined
        ? { setting: 'server.secret_env', hint: `set server.secret_env = "${config.server.secret_env}" and that variable on every node` }
        : config.server.secret_file !== undefined
          ? { setting: 'server.secret_file', hint: `copy ${config.server.secret_file} to every node (server.secret_file)` }
          : { setting: 'server.secret_file', hint: `copy ${resolve(secretPath(config.database.path))} to every node and name it in server.secret_file` }
  if (opts.json) {
    return printJson({
      from,
      to,
      copied: result.counts,
      skipped: result.skipped,
      accounts: result.accounts,
      ledger_sha256: result.ledgerDigest,
      checked: true,
      secret: secret.setting,
    })
  }
  process.stdout.write(`copied ${from} to ${to}\n\n`)
  printTable(
    ['TABLE', 'COPIED', 'LEFT OUT'],
    Object.entries(result.counts).map(([t, n]) => [t, n, (result.skipped as Record<string, number>)[t] ?? 0]),
  )
  process.stdout.write('\n')
  printTable(
    ['ACCOUNT', 'BALANCE', 'LEDGER ROWS'],
    result.accounts.map((a) => [a.name, a.balance, a.ledgerRows]),
  )
  process.stdout.write(
    `\nChecked: the row counts, every balance and the ledger (sha256 ${result.ledgerDigest.slice(0, 16)}…) are equal on both sides.\n` +
      'Left out: verifications past retention and window rows too old to count (the retention sweep would delete them).\n' +
      `Next: on every node set [database] url = "${to}", and ${secret.hint}.\n`,
  )
}
