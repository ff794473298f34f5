/**
 * `otpd db copy --to postgres://…`: moves a SQLite deployment to PostgreSQL
 * (store/copy-to-pg.ts), then says what every node's config needs.
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { Command } from 'commander'
import { pgConnection } from '../config/database.ts'
import { systemClock } from '../lib/clock.ts'
import { copyToPostgres, type CopyResult } from '../store/copy-to-pg.ts'
import { openClient } from '../store/pg/client.ts'
import { applyMigrations } from '../store/pg/migrate.ts'
import { secretPath } from '../store/secret.ts'
import { openDatabase } from '../store/sqlite/db.ts'
import { example, load, printJson, printTable, withConfig, withJson, type CommonOptions } from './common.ts'

export function dbCommand(): Command {
  const db = new Command('db').description('move the database between engines')
  example(
    withJson(withConfig(db.command('copy').description("copy this config's SQLite database into an empty PostgreSQL database (stop otpd first)"))),
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
  if (config.database.url !== undefined) {
    throw new Error(
      "this configuration already uses PostgreSQL (database.url): db copy copies the SQLite database named by database.path; run it with the SQLite deployment's config",
    )
  }
  if (!/^postgres(ql)?:\/\//.test(opts.to) || !URL.canParse(opts.to))
    throw new Error(`--to must be a postgres:// URL (postgres://user@host:5432/database), not '${opts.to}'`)
  if (opts.passwordEnv !== undefined && !env[opts.passwordEnv]) throw new Error(`--password-env names ${opts.passwordEnv}, which is not set`)
  const path = config.database.path
  if (path === ':memory:' || !existsSync(path)) throw new Error(`no database at ${resolve(path)} (pass the SQLite deployment's --config)`)
  const conn = pgConnection({ ...config.database, url: opts.to, password_env: opts.passwordEnv }, env)
  const source = openDatabase({ path, synchronous: config.database.synchronous, busyTimeoutMs: config.database.busy_timeout_ms })
  const target = openClient(conn, { poolSize: 1, lockTimeoutMs: config.database.busy_timeout_ms })
  let result: CopyResult
  try {
    await target.unsafe('SELECT 1').catch((err: unknown) => {
      throw new Error(`cannot reach the PostgreSQL database ${conn.display}: ${err instanceof Error ? err.message : String(err)}`)
    })
    result = await copyToPostgres(source.$client, target, {
      now: systemClock.now(),
      retentionDays: config.retention.days,
      migrate: (sql) => applyMigrations(sql, conn.display),
    })
  } finally {
    await target.close({ timeout: 5 }).catch(() => undefined)
    source.$client.close()
  }
  // Where the secret is, never its value: every node needs that same secret.
  const secret =
    config.server.secret !== undefined
      ? { setting: 'server.secret', hint: 'set the same server.secret on every node' }
      : config.server.secret_env !== undefined
        ? { setting: 'server.secret_env', hint: `set server.secret_env = "${config.server.secret_env}" and that variable on every node` }
        : config.server.secret_file !== undefined
          ? { setting: 'server.secret_file', hint: `copy ${config.server.secret_file} to every node (server.secret_file)` }
          : { setting: 'server.secret_file', hint: `copy ${resolve(secretPath(path))} to every node and name it in server.secret_file` }
  if (opts.json) {
    return printJson({
      from: resolve(path),
      to: conn.display,
      copied: result.counts,
      skipped: result.skipped,
      accounts: result.accounts,
      ledger_sha256: result.ledgerDigest,
      checked: true,
      secret: secret.setting,
    })
  }
  process.stdout.write(`copied ${resolve(path)} to ${conn.display}\n\n`)
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
      `Next: on every node set [database] url = "${conn.display}", and ${secret.hint}.\n`,
  )
}
