/**
 * OTPD_ variables that set nothing: `OTPD_SERVER_LISTEN` (one underscore) is
 * ignored by the loader, so it is named with the nearest real setting.
 */
import type { TSchema } from '@sinclair/typebox'
import { didYouMean } from '../lib/nearest-name.ts'
import { Config } from './schema.ts'

/** Every setting as its dotted key, `server.listen`...; with `tables`, the tables too (`server`, `server.tls`). */
export function settingKeys(tables = false): string[] {
  const out: string[] = []
  const walk = (schema: TSchema, path: string[]) => {
    if (schema.type === 'object' && schema.properties) {
      if (tables && path.length > 0) out.push(path.join('.'))
      for (const [k, s] of Object.entries(schema.properties as Record<string, TSchema>)) walk(s, [...path, k])
    } else if (path.length > 0) out.push(path.join('.'))
  }
  walk(Config, [])
  return out
}

/** Every setting as its environment variable, OTPD_SERVER__LISTEN..., plus OTPD_CONFIG. */
function settingNames(): string[] {
  return ['OTPD_CONFIG', ...settingKeys().map((k) => 'OTPD_' + k.toUpperCase().replaceAll('.', '__'))]
}

/** Variable names the config itself refers to (`password_env = "OTPD_SMTP_PASSWORD"`): those are secrets, not settings. */
function namedByConfig(raw: unknown, out = new Set<string>()): Set<string> {
  if (typeof raw === 'string') out.add(raw)
  else if (typeof raw === 'object' && raw !== null) for (const v of Object.values(raw)) namedByConfig(v, out)
  return out
}

export function unknownEnvWarnings(env: Record<string, string | undefined>, raw: unknown): string[] {
  const names = settingNames()
  const referenced = namedByConfig(raw)
  const warnings: string[] = []
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('OTPD_') || name.includes('__') || names.includes(name) || referenced.has(name)) continue
    warnings.push(`environment variable ${name} matches no setting and is ignored${didYouMean(name, names)}`)
  }
  return warnings
}
