/**
 * Loads the configuration: built-in defaults, then the TOML file (`--config`
 * or OTPD_CONFIG), then OTPD_<SECTION>__<KEY> environment variables, then
 * validation. Every problem is reported with its key path. This is the only
 * module that reads process.env.
 */
import { readFileSync } from 'node:fs'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parse as parseToml } from 'smol-toml'
import { Config } from './schema.ts'
import { checkProviders } from '../delivery/registry.ts'
import { checkTls } from './tls.ts'

export class ConfigError extends Error {
  constructor(
    readonly problems: string[],
    readonly source: string,
  ) {
    super(`invalid configuration (${source}):\n  - ${problems.join('\n  - ')}`)
  }
}

export interface LoadedConfig {
  config: Config
  /** Where the file came from, or 'built-in defaults'. */
  source: string
  /** Environment as seen at load time; providers read their secrets from it (by name, from the config). */
  env: Record<string, string | undefined>
}

type Json = Record<string, unknown>

export function loadConfig(opts: { file?: string; env?: Record<string, string | undefined> } = {}): LoadedConfig {
  const env = opts.env ?? process.env
  const file = opts.file ?? (env.OTPD_CONFIG || undefined)
  let raw: Json = {}
  if (file) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      throw new ConfigError([`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`], file)
    }
    try {
      raw = parseToml(text) as Json
    } catch (err) {
      throw new ConfigError([`${file} is not valid TOML: ${(err as Error).message.split('\n')[0]}`], file)
    }
  }
  const overlaid = overlayEnv(raw, env)
  const source = (file ?? 'built-in defaults') + (overlaid.length ? ` + environment (${overlaid.join(', ')})` : '')
  return { config: resolveConfig(raw, source, env), source, env }
}

/** OTPD_LIMITS__RECIPIENT_PER_MINUTE=5 -> limits.recipient_per_minute = "5" (converted by the schema). */
function overlayEnv(raw: Json, env: Record<string, string | undefined>): string[] {
  const used: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('OTPD_') || !name.includes('__') || value === undefined) continue
    const path = name.slice(5).toLowerCase().split('__')
    let node = raw
    for (const part of path.slice(0, -1)) {
      if (typeof node[part] !== 'object' || node[part] === null) node[part] = {}
      node = node[part] as Json
    }
    // Lists (channels.sms) are written comma-separated in the environment.
    node[path.at(-1)!] = path[0] === 'channels' ? value.split(',').map((s) => s.trim()) : value
    used.push(name)
  }
  return used.sort()
}

export function resolveConfig(raw: Json, source = 'built-in defaults', env: Record<string, string | undefined> = {}): Config {
  const value = structuredClone(raw)
  Value.Default(Config, value)
  Value.Convert(Config, value)
  const problems: string[] = []
  const seen = new Set<string>()
  for (const e of Value.Errors(Config, value)) {
    const key = e.path.slice(1).replaceAll('/', '.') || '(top level)'
    if (seen.has(key)) continue // a union reports once per variant; one sentence per key is enough
    seen.add(key)
    if (e.message === 'Unexpected property') {
      problems.push(`${key} is not a known setting`)
      continue
    }
    // Never echo a value that may be a secret.
    const got = /secret|password|token/i.test(key) ? '' : ` (got ${JSON.stringify(e.value)})`
    problems.push(`${key} must be ${expectation(e.schema)}${got}`)
  }
  if (problems.length === 0) {
    const config = value as Config
    problems.push(...checkListeners(config.server), ...checkTls(config.server.tls), ...checkProviders(config, env))
    if (problems.length === 0) return config
  }
  throw new ConfigError(problems, source)
}

export function parseListen(listen: string): { hostname: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):([0-9]{1,5})$/.exec(listen)
  if (!m) throw new Error(`'${listen}' is not HOST:PORT`)
  const port = Number(m[2])
  if (port > 65535) throw new Error(`port ${port} is out of range`)
  return { hostname: m[1]!.replace(/^\[|\]$/g, ''), port }
}

function checkListen(key: string, listen: string): string[] {
  try {
    parseListen(listen)
    return []
  } catch (err) {
    return [`${key} must be HOST:PORT such as 127.0.0.1:8080 (${(err as Error).message})`]
  }
}

function checkListeners(server: Config['server']): string[] {
  const problems = checkListen('server.listen', server.listen)
  if (server.admin_listen === undefined) return problems
  problems.push(...checkListen('server.admin_listen', server.admin_listen))
  if (problems.length === 0 && server.admin_listen === server.listen && parseListen(server.listen).port !== 0) {
    problems.push('server.admin_listen must differ from server.listen (the admin listener is a second port)')
  }
  return problems
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
      return schema.minLength ? `a string of at least ${schema.minLength} characters` : 'a string'
    case 'array':
      return 'a non-empty list of names'
    case 'object':
      return 'a table'
    default:
      return 'valid'
  }
}
