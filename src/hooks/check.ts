/**
 * `[hooks.NAME]` checks for `otpd config check` and `serve`
 * (docs/integrations.md#the-hooks-table): the name fits a URL path, the type
 * is built in, the secret's variable is set, `channels` names providers that
 * exist and deliver that channel, and every other key is a setting of the
 * hook's type. Whether `account` exists is known only with the database: a
 * request to a hook whose account is missing is refused (and logged).
 */
import type { Config } from '../config/schema.ts'
import { HOOK_TYPES, type HookSettings } from './adapter.ts'
import { HOOK_ADAPTERS } from './registry.ts'

export const HOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/
/** The keys every hook table has; the type's own come from its adapter. */
export const SHARED_HOOK_KEYS = ['type', 'account', 'secret_env', 'requests_per_minute', 'code_lifetime_seconds', 'channels'] as const

type Env = Record<string, string | undefined>

export function checkHooks(config: Config, env: Env): string[] {
  const hooks: Record<string, unknown> = isTable(config.hooks) ? config.hooks : {}
  return Object.entries(hooks).flatMap(([name, table]) => (isTable(table) ? checkHook(config, name, table, env) : []))
}

function checkHook(config: Config, name: string, table: Record<string, unknown>, env: Env): string[] {
  const problems: string[] = []
  const at = `hooks.${name}`
  if (!HOOK_NAME.test(name)) problems.push(`${at}: a hook's name must be 1-63 lower-case letters, digits, '-' or '_' (it is the path /hooks/NAME)`)
  const adapter = typeof table.type === 'string' ? HOOK_ADAPTERS[table.type as keyof typeof HOOK_ADAPTERS] : undefined
  if (!adapter) {
    // The schema names a wrong or missing type; a type it knows but this build lacks is named here.
    if ((HOOK_TYPES as readonly unknown[]).includes(table.type)) {
      problems.push(`${at}.type '${table.type}' is not built into this otpd`)
    }
    return problems
  }
  const secretEnv = typeof table.secret_env === 'string' ? table.secret_env : undefined
  const secret = secretEnv === undefined ? undefined : env[secretEnv]
  if (secretEnv !== undefined && secret === undefined) problems.push(`${at}.secret_env names ${secretEnv}, which is not set`)
  else if (secretEnv !== undefined && secret === '') problems.push(`${at}.secret_env names ${secretEnv}, which is empty`)
  const own = new Set(adapter.optionKeys ?? [])
  const options: Record<string, string | number | boolean> = {}
  for (const [key, value] of Object.entries(table)) {
    if ((SHARED_HOOK_KEYS as readonly string[]).includes(key)) continue
    if (!own.has(key)) problems.push(`${at}.${key} is not a setting of a '${adapter.type}' hook`)
    else options[key] = value as string | number | boolean
  }
  const settings: HookSettings = { name, type: adapter.type, secret, options }
  if (adapter.check) problems.push(...adapter.check(settings, table))
  else if (secretEnv === undefined) problems.push(`${at}.secret_env is missing: the variable holding the secret shared with the identity server`)
  problems.push(...checkChannels(config, at, table.channels))
  return problems
}

function checkChannels(config: Config, at: string, channels: unknown): string[] {
  if (!isTable(channels)) return []
  const providers: Record<string, unknown> = isTable(config.providers) ? config.providers : {}
  return Object.entries(channels).flatMap(([channel, names]) =>
    (Array.isArray(names) ? names : [])
      .filter((n): n is string => typeof n === 'string' && !Object.hasOwn(providers, n))
      .map((n) => `${at}.channels.${channel} names provider '${n}', which is not defined`),
  )
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
