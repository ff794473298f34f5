/**
 * The own settings of the auth0, authentik, keycloak and kratos hook types
 * (docs/integrations.md), as one table: `otpd config check` names each
 * problem as a sentence with its key, and a key a type does not take is one.
 */
import type { HookAdapter, HookSettings, HookType } from './adapter.ts'

type Value = string | number | boolean

interface OptionRule {
  kind: 'string' | 'boolean'
  /** Why it is needed, when it must be set. */
  required?: string
  oneOf?: readonly string[]
  /** Needed only when another setting has this value, and why. */
  when?: { key: string; is: string; why: string }
}

export type GatewayType = Extract<HookType, 'auth0' | 'authentik' | 'keycloak' | 'kratos'>

export const GATEWAY_OPTIONS: Record<GatewayType, Record<string, OptionRule>> = {
  auth0: {
    audience: { kind: 'string', required: "the connection's gateway_authentication.audience, the token's aud" },
    subject: { kind: 'string', required: "the connection's gateway_authentication.subject, the token's sub" },
    secret_base64: { kind: 'boolean' },
  },
  authentik: {
    auth: { kind: 'string', oneOf: ['bearer', 'basic'] },
    username: { kind: 'string', when: { key: 'auth', is: 'basic', why: "the stage's API Auth field, the Basic username" } },
  },
  keycloak: {
    auth: { kind: 'string', oneOf: ['header', 'basic', 'attribute'] },
    token_header: { kind: 'string' },
    token_attribute: { kind: 'string', when: { key: 'auth', is: 'attribute', why: 'the body field holding the API secret' } },
    username: { kind: 'string', when: { key: 'auth', is: 'basic', why: "the plugin's Basic Auth Username" } },
    message_attribute: { kind: 'string' },
    receiver_attribute: { kind: 'string' },
    uuid_attribute: { kind: 'string' },
  },
  kratos: {
    auth: { kind: 'string', oneOf: ['api_key', 'basic_auth'] },
    header: { kind: 'string' },
    username: { kind: 'string', when: { key: 'auth', is: 'basic_auth', why: 'request_config.auth.config.user' } },
  },
}

const SECRET_WHY: Record<GatewayType, string> = {
  auth0: "the variable holding the connection's gateway_authentication.secret",
  authentik: "the variable holding the stage's Bearer token or Basic password",
  keycloak: "the variable holding the plugin's API Secret",
  kratos: "the variable holding request_config.auth's value or password",
}

function ruleProblem(key: string, rule: OptionRule, value: Value | undefined, options: Readonly<Record<string, Value>>): string | undefined {
  if (value === undefined || value === '') {
    if (rule.required) return `${key} is missing: ${rule.required}`
    if (rule.when && options[rule.when.key] === rule.when.is) return `${key} is missing: ${rule.when.why} (${rule.when.key} = "${rule.when.is}")`
    return undefined
  }
  if (typeof value !== rule.kind) return `${key} must be a ${rule.kind} (got ${JSON.stringify(value)})`
  if (rule.oneOf && !rule.oneOf.includes(String(value))) return `${key} must be one of: ${rule.oneOf.join(', ')} (got ${JSON.stringify(value)})`
  return undefined
}

/** The problems of a `[hooks.NAME]` table's own settings, each a sentence naming `hooks.NAME.key`; check.ts names unknown keys. */
export function gatewayOptionProblems(name: string, type: GatewayType, options: Readonly<Record<string, Value>>): string[] {
  return Object.entries(GATEWAY_OPTIONS[type]).flatMap(([k, rule]) => ruleProblem(`hooks.${name}.${k}`, rule, options[k], options) ?? [])
}

/** The adapter's `optionKeys` and `check` for a type: its own settings, and `secret_env`, which each of these types needs. */
export function gatewaySettings(type: GatewayType): Pick<HookAdapter, 'optionKeys' | 'check'> {
  return {
    optionKeys: Object.keys(GATEWAY_OPTIONS[type]),
    check: (settings: HookSettings, table: Readonly<Record<string, unknown>>) => [
      ...(table.secret_env === undefined ? [`hooks.${settings.name}.secret_env is missing: ${SECRET_WHY[type]}`] : []),
      ...gatewayOptionProblems(settings.name, type, settings.options),
    ],
  }
}
