/**
 * Loads the configuration: built-in defaults, then the TOML file, then
 * OTPD_<SECTION>__<KEY> environment variables, then validation. The file is
 * the first of: `--config`, OTPD_CONFIG, ./otp.config.toml,
 * /etc/otpd/otp.config.toml. Types are strict (a string is never a number),
 * and every problem of every section is reported in one run, by key path.
 * This is the only module that reads process.env, besides outbound-cap.ts
 * (Bun's own variable, read before anything else loads).
 *
 * Checks that need other modules (provider tables, which the delivery layer
 * owns) are passed in by the caller as `checks`: config depends on nothing.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parse as parseToml, TomlError } from 'smol-toml'
import { checkDatabase } from './database.ts'
import { readEnvFile } from './env-file.ts'
import { accessMessage, isAccessError } from '../lib/fs-errors.ts'
import { didYouMean } from '../lib/nearest-name.ts'
import { settingKeys, unknownEnvWarnings } from './env-names.ts'
import { checkListeners } from './listen.ts'
import { checkPublicUrl } from './public-url.ts'
import { Config, DatabaseConfig } from './schema.ts'
import { checkTls } from './tls.ts'

export { parseListen } from './listen.ts'

export type Env = Record<string, string | undefined>

export class ConfigError extends Error {
  /** Not problems, but worth saying before them (OTPD_ variables that set nothing): the loader adds them. */
  warnings: string[] = []

  constructor(
    readonly problems: string[],
    readonly source: string,
  ) {
    super(`invalid configuration (${source}):\n  - ${problems.join('\n  - ')}`)
  }
}

export interface LoadedConfig {
  config: Config
  /** Where the file came from, or 'built-in defaults'; with the environment variables used. */
  source: string
  /** The file read, or null for built-in defaults. */
  file: string | null
  /** Environment as seen at load time; providers read their secrets from it (by name, from the config). */
  env: Env
  /** Not errors, but worth saying: OTPD_ variables that match no setting. */
  warnings: string[]
}

/**
 * A check beyond the schema, run on the parsed config. `valid(section)` says
 * whether that section passed the schema; a check skips sections that did not.
 */
export type ConfigCheck = (config: Config, valid: (section: string) => boolean, env: Env) => string[]

/** Where otpd looks when neither --config nor OTPD_CONFIG names a file. */
export const CONFIG_SEARCH = ['./otp.config.toml', '/etc/otpd/otp.config.toml'] as const

export interface LoadOptions {
  file?: string
  env?: Env
  /** A systemd EnvironmentFile whose variables are added to (and win over) `env`. */
  envFile?: string
  search?: readonly string[]
  checks?: ConfigCheck[]
}

type Json = Record<string, unknown>

/** The config file to read, as an absolute path (messages and the start line name it so), or null for built-in defaults. */
export function findConfigFile(opts: { file?: string; env: Env; search?: readonly string[] }): string | null {
  if (opts.file) return resolve(opts.file)
  if (opts.env.OTPD_CONFIG) return resolve(opts.env.OTPD_CONFIG)
  for (const candidate of opts.search ?? CONFIG_SEARCH) {
    const path = resolve(candidate)
    if (existsSync(path)) return path
  }
  return null
}

export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env: Env = { ...(opts.env ?? process.env), ...(opts.envFile ? readEnvFile(opts.envFile) : {}) }
  const file = findConfigFile({ file: opts.file, env, search: opts.search })
  let raw: Json = {}
  if (file) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      if (isAccessError(err)) throw new ConfigError([accessMessage('read the config file', file, err, 'to read it')], file)
      throw new ConfigError([`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`], file)
    }
    try {
      raw = parseToml(text) as Json
    } catch (err) {
      const at = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : ''
      const what = (err as Error).message.split('\n')[0]!.replace(/^Invalid TOML document: /, '')
      throw new ConfigError([`${file} is not valid TOML${at}: ${what}`], file)
    }
    resolveFilePaths(raw, dirname(file))
  }
  const overlaid = overlayEnv(raw, env)
  const source = (file ?? 'built-in defaults') + (overlaid.length ? ` + environment (${overlaid.join(', ')})` : '')
  const warnings = unknownEnvWarnings(env, raw)
  try {
    return { config: resolveConfig(raw, source, env, opts.checks), source, file, env, warnings }
  } catch (err) {
    if (err instanceof ConfigError) err.warnings = warnings
    throw err
  }
}

/** The settings that name a file; `database.path` also has a default, resolved like a written value when a file is read. */
export const PATH_SETTINGS = ['database.path', 'server.secret_file', 'server.tls.cert', 'server.tls.key'] as const

/**
 * A relative path written in a config file (or the default `database.path`
 * of a config file that sets none) is read from the file's directory, so a
 * command finds the server's database wherever it is run from. Environment
 * variables and built-in defaults without a file keep the current directory,
 * as a shell would. `:memory:` is no path.
 */
function resolveFilePaths(raw: Json, dir: string): void {
  if (raw.database === undefined) raw.database = {}
  const db = raw.database
  if (typeof db === 'object' && db !== null && !Array.isArray(db) && (db as Json).path === undefined) {
    ;(db as Json).path = (DatabaseConfig.properties.path as TSchema).default
  }
  for (const key of PATH_SETTINGS) {
    const parts = key.split('.')
    let node: unknown = raw
    for (const part of parts.slice(0, -1)) node = typeof node === 'object' && node !== null ? (node as Json)[part] : undefined
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue
    const leaf = parts.at(-1)!
    const value = (node as Json)[leaf]
    if (typeof value === 'string' && value !== '' && value !== ':memory:' && !isAbsolute(value)) (node as Json)[leaf] = resolve(dir, value)
  }
}

/** OTPD_LIMITS__RECIPIENT_PER_MINUTE=5 -> limits.recipient_per_minute = 5 (a number where the schema wants one). */
function overlayEnv(raw: Json, env: Env): string[] {
  const used: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('OTPD_') || !name.includes('__') || value === undefined) continue
    const path = name.slice(5).toLowerCase().split('__')
    let node = raw
    for (const part of path.slice(0, -1)) {
      if (typeof node[part] !== 'object' || node[part] === null) node[part] = {}
      node = node[part] as Json
    }
    node[path.at(-1)!] = envValue(path, value)
    used.push(name)
  }
  return used.sort()
}

function envValue(path: string[], value: string): unknown {
  // Lists (channels.sms) are written comma-separated in the environment.
  if (path[0] === 'channels' || (path[0] === 'fraud' && (path[1] === 'allowed_countries' || path[1] === 'whatsapp_allowed_countries')))
    return value.split(',').map((s) => s.trim())
  let schema: TSchema | undefined = Config
  for (const part of path) schema = schema?.properties?.[part] as TSchema | undefined
  // The environment has only strings: a whole number is converted where the schema wants one, and nothing else is.
  if (schema?.type === 'integer' && /^-?[0-9]+$/.test(value.trim())) return Number(value.trim())
  if (schema?.type === 'boolean' && /^(true|false)$/.test(value.trim())) return value.trim() === 'true'
  if (schema?.type === 'number' && /^-?[0-9]+(\.[0-9]+)?$/.test(value.trim())) return Number(value.trim())
  if (schema?.type === 'boolean' && /^(true|false)$/.test(value.trim())) return value.trim() === 'true'
  return value
}

export function resolveConfig(raw: Json, source = 'built-in defaults', env: Env = {}, checks: ConfigCheck[] = []): Config {
  const value = structuredClone(raw)
  Value.Default(Config, value)
  const problems: string[] = []
  const seen = new Set<string>()
  const invalid = new Set<string>()
  for (const e of Value.Errors(Config, value)) {
    const key = e.path.slice(1).replaceAll('/', '.') || '(top level)'
    invalid.add(key.split('.')[0]!)
    if (key.startsWith('server.tls')) invalid.add('server.tls')
    if (seen.has(key)) continue // a union reports once per variant; one sentence per key is enough
    seen.add(key)
    if (e.message === 'Unexpected property') {
      problems.push(`${key} is not a known setting${didYouMean(key, settingKeys(true))}`)
      continue
    }
    // Never echo a value that may be a secret.
    // (A database URL may carry a password.)
    const got = /secret|password|token/i.test(key) || key === 'database.url' ? '' : ` (got ${JSON.stringify(e.value)})`
    problems.push(`${key} must be ${expectation(e.schema)}${got}`)
  }
  const valid = (section: string) => !invalid.has(section)
  const config = value as Config
  const server = (typeof config.server === 'object' && config.server !== null ? config.server : {}) as Partial<Config['server']>
  problems.push(...checkListeners(server))
  problems.push(...checkPublicUrl(server))
  if (valid('server.tls')) problems.push(...checkTls(server.tls))
  problems.push(...checkDatabase(config, valid, env))
  for (const check of checks) problems.push(...check(config, valid, env))
  if (problems.length === 0) return config
  throw new ConfigError(problems, source)
}

/** What a schema accepts, as words: "one of: FULL, NORMAL", "a whole number from 1 to 10". */
function expectation(schema: TSchema): string {
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((v: TSchema) => v.const !== undefined)) {
    return `one of: ${schema.anyOf.map((v: TSchema) => String(v.const)).join(', ')}`
  }
  switch (schema.type) {
    case 'integer':
      return `a whole number from ${schema.minimum ?? 0} to ${schema.maximum ?? 'any'}`
    case 'string':
      if (schema.pattern && schema.description) return schema.description
      if (schema.maxLength !== undefined) return `a string of ${schema.minLength ?? 0} to ${schema.maxLength} characters`
      return schema.minLength ? `a string of at least ${schema.minLength} characters` : 'a string'
    case 'boolean':
      return 'true or false'
    case 'number':
      return `a number from ${schema.minimum ?? 0} to ${schema.maximum ?? 'any'}`
    case 'array':
      return 'a non-empty list of names'
    case 'object':
      return 'a table'
    default:
      return 'valid'
  }
}
