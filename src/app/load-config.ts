/**
 * The config as the commands that deliver see it: config/load.ts checks the
 * file's own shape, and this adds the provider checks the delivery registry
 * owns (`serve`, `send-test`, `config check`). Operator commands that only
 * touch the database load without them, so they never need delivery secrets.
 */
import {
  ConfigError,
  loadConfig as loadShape,
  resolveConfig as resolveShape,
  type ConfigCheck,
  type Env,
  type LoadedConfig,
  type LoadOptions,
} from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { checkEmailLook } from '../delivery/email-html.ts'
import { checkProviders } from '../delivery/registry.ts'
import { routedConfig, routesDelivery, routingProblems } from '../delivery/routing.ts'
import { checkHooks } from '../hooks/check.ts'
import { fraudCheck } from './fraud.ts'
import { messagesCheck } from './catalogue.ts'

export { ConfigError, type LoadedConfig }

/** Providers and channels, even when either section failed the schema elsewhere: every problem in one run. */
export const providerCheck: ConfigCheck = (config, _valid, env) => checkProviders(config, env)

/**
 * `[[routing]]` (delivery/routing.ts): its own problems, and those of each
 * table's providers as the table changes them (its channels, its senders),
 * named after the table; what `[channels]` and `[providers]` get wrong alone
 * is providerCheck's.
 */
export const routingCheck: ConfigCheck = (config, valid, env) => {
  if (!valid('routing') || !valid('channels') || config.routing.length === 0) return []
  const problems = routingProblems(config)
  const base = new Set(checkProviders(config, env))
  for (const [i, route] of config.routing.entries()) {
    if (!routesDelivery(route)) continue
    for (const p of checkProviders(routedConfig(config, route), env)) if (!base.has(p)) problems.push(`routing[${i}]: ${p}`)
  }
  return problems
}

/** `[messages.email]`: the HTML template file, when one is named (delivery/email-html.ts). */
/** `[hooks.NAME]` (hooks/check.ts). */
export const hookCheck: ConfigCheck = (config, _valid, env) => checkHooks(config, env)

export const emailLookCheck: ConfigCheck = (config, valid) => (valid('messages') ? checkEmailLook(config.messages.email) : [])

export function loadConfig(opts: Omit<LoadOptions, 'checks'> = {}): LoadedConfig {
  return loadShape({ ...opts, checks: [providerCheck, routingCheck, fraudCheck, emailLookCheck, messagesCheck, hookCheck] })
}

export function resolveConfig(raw: Record<string, unknown>, source = 'built-in defaults', env: Env = {}): Config {
  return resolveShape(raw, source, env, [providerCheck, routingCheck, fraudCheck, emailLookCheck, messagesCheck, hookCheck])
}

/** Environment variables a provider names that the environment lacks, from the problems of a failed check. */
export function missingVariables(problems: string[]): string[] {
  return [...new Set(problems.flatMap((p) => /names ([A-Z_][A-Z0-9_]*), which is (?:not set|empty)/.exec(p)?.[1] ?? []))]
}
