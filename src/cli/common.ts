/**
 * What every command shares: `--config`, `--json`, aligned tables, and turning
 * an operator mistake into one clear line and a non-zero exit.
 */
import { type Command, InvalidArgumentError, Option } from 'commander'
import { userInfo } from 'node:os'
import { loadConfig as loadWithProviders, openCore, type Core } from '../app/index.ts'
import { ConfigError, loadConfig, type LoadedConfig } from '../config/load.ts'
import { createLogger, flushLogs } from '../lib/logger.ts'
import { missingDatabaseFile } from '../store/open-engine.ts'

export interface CommonOptions {
  config?: string
  envFile?: string
  json?: boolean
  /** Who the audit log names for this command's changes (`--operator`); else the OS user. */
  operator?: string
  /** `--init`: a command that changes data may create the database it names when there is none. */
  init?: boolean
}

export function withConfig(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'config file (default: $OTPD_CONFIG, else ./otp.config.toml, else /etc/otpd/otp.config.toml, else built-in defaults)')
    .option('--env-file <file>', "read KEY=value lines (systemd's EnvironmentFile) into the environment first; '-' reads stdin")
}

/**
 * `--operator NAME` on a command that changes something: the name its audit
 * entry gives (docs/console.md#audit-log). Without it, the OS user running
 * the command. A label, not a sign-in: whoever runs the CLI can write the
 * database anyway.
 */
export function operatorOption(): Option {
  return new Option('--operator <name>', 'the name the audit log gives for this change (default: $SUDO_USER under sudo, else your OS user name)').argParser(
    operatorArg,
  )
}

/**
 * `--init` on a command that changes data: without it, such a command run
 * where the config names no existing database refuses instead of creating
 * one (a key written to a database the server never reads is then refused).
 */
export function initOption(): Option {
  return new Option('--init', 'create the database if the config names one that does not exist yet (else the command refuses)')
}

function operatorArg(value: string): string {
  const v = value.trim()
  if (v === '' || v.length > 64 || /[\u0000-\u001f\u007f]/.test(v))
    throw new InvalidArgumentError(`--operator must be 1-64 printable characters, got '${value}'`)
  return v
}

/**
 * The CLI's actor (docs/console.md#audit-log): `--operator`, else the person
 * behind `sudo` (`SUDO_USER`: `sudo -u otpd otpd …` is run by them, not by
 * otpd), else the OS user running the command, else its login name, else its uid.
 */
export function cliActor(opts: CommonOptions, env: Record<string, string | undefined> = {}): { operator: string; source: 'cli' } {
  if (opts.operator !== undefined) return { operator: opts.operator, source: 'cli' }
  const named = (v: string | undefined) => (v !== undefined && /^[^\u0000-\u001f\u007f]{1,64}$/.test(v) ? v : undefined)
  const sudo = named(env.SUDO_USER)
  if (sudo !== undefined) return { operator: sudo, source: 'cli' }
  let name: string | undefined
  try {
    name = named(userInfo().username)
  } catch {
    // No entry in the user database (a container's arbitrary uid): the login name the session gives, else the uid.
  }
  return { operator: name ?? named(env.LOGNAME) ?? named(env.USER) ?? `uid ${process.getuid?.() ?? '?'}`, source: 'cli' }
}

export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'print JSON instead of a table, for scripts')
}

export function example(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`)
}

/** A subcommand of `parent` that takes `--config` and `--json`, with the examples its help ends with. */
export function subcommand(parent: Command, spec: string, description: string, ...examples: string[]): Command {
  return example(withJson(withConfig(parent.command(spec).description(description))), ...examples)
}

/**
 * The config for a command. `delivery`: the command delivers (serve,
 * send-test, config check), so provider tables and their secrets are checked
 * too; the database commands never need them.
 */
export function load(opts: CommonOptions, use: { delivery?: boolean } = {}): LoadedConfig {
  const o = { file: opts.config, envFile: opts.envFile }
  return use.delivery ? loadWithProviders(o) : loadConfig(o)
}

/**
 * Opens the database for an operator command; logs go to stderr so stdout
 * stays data. A missing database is an error rather than a new empty one
 * (usually a wrong directory or config), unless the command changes data and
 * was given `--init` (docs/operating.md#cli).
 */
export function openForCli(opts: CommonOptions, use: { readOnly?: boolean } = {}): Promise<Core> {
  const { config, env, source } = load(opts)
  const mustExist = use.readOnly || !opts.init
  const refusal = (where: string, setting: string) =>
    use.readOnly
      ? `no database at ${where} (${setting} from ${source}): start otpd serve or pass --config`
      : `no database at ${where} (${setting} from ${source}): this command changes data and does not create one; ` +
        'pass --config for the database otpd serve uses, or add --init to create it here'
  const missing = mustExist ? missingDatabaseFile(config) : undefined
  if (missing !== undefined) throw new Error(refusal(missing, 'database.path'))
  return openCore(config, {
    env,
    actor: cliActor(opts, env),
    logger: createLogger({ level: 'warn', format: 'text', write: (l) => process.stderr.write(l + '\n') }),
    // On stderr, so stdout stays the command's data (a key printed for a database the server never reads is the mistake this catches).
    onDatabaseCreated: (path) => process.stderr.write(`otpd: created a new, empty database at ${path} (database.path from ${source})\n`),
    // PostgreSQL: a database with no otpd tables is the same mistake (another database than the server's).
    refuseEmptyDatabase: mustExist ? (display) => refusal(`${display}: it has no otpd tables`, 'database.url') : undefined,
  })
}

/** Runs a command body with the database open, and closes it afterwards. */
export async function withCore<T>(opts: CommonOptions, fn: (core: Core) => Promise<T>, use: { readOnly?: boolean } = {}): Promise<T> {
  const core = await openForCli(opts, use)
  try {
    return await fn(core)
  } finally {
    await core.engine.close()
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

// Tables and times live in table.ts; re-exported so every command imports them from here.
export { formatTime, isoTime, noneYet, printListing, printTable } from './table.ts'

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A period such as `0`, `90s`, `30m`, `24h`, `7d`, in milliseconds. */
export function durationArg(name: string) {
  return (value: string): number => {
    const m = /^([0-9]{1,6})([smhd])?$/.exec(value.trim())
    if (m && (m[2] !== undefined || m[1] === '0')) return Number(m[1]) * (m[2] === undefined ? 0 : UNITS[m[2]]!)
    throw new InvalidArgumentError(`${name} takes a period such as 30m, 24h or 7d (0: none), got '${value}'`)
  }
}

export function integerArg(name: string, range = '') {
  return (value: string): number => {
    if (!/^[0-9]+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number${range}, got '${value}'`)
    return Number(value)
  }
}

/**
 * Prints a failed command as one line on stderr and exits 1. Config and
 * operator errors carry their own wording; anything else (a database that
 * cannot be opened, a port in use) is shown by its message, never a stack.
 */
export function reportAndExit(err: unknown): never {
  // Warnings come first: they often explain the failure (a mistyped OTPD_ variable, then the port it did not set).
  flushLogs()
  if (err instanceof ConfigError) for (const w of err.warnings) process.stderr.write(`otpd: warning: ${w}\n`)
  const text =
    err instanceof ConfigError ? `invalid configuration (${err.source}): ${err.problems.join('; ')}` : err instanceof Error ? err.message : String(err)
  process.stderr.write(`otpd: error: ${text.replaceAll('\n', ' ')}\n`)
  process.exit(1)
}
