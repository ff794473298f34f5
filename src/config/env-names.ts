/**
 * OTPD_ variables that set nothing: `OTPD_SERVER_LISTEN` (one underscore) is
 * ignored by the loader, so it is named with the nearest real setting.
 */
import type { TSchema } from '@sinclair/typebox'
import { Config } from './schema.ts'

/** Every setting as its environment variable, OTPD_SERVER__LISTEN..., plus OTPD_CONFIG. */
function settingNames(): string[] {
  const out = ['OTPD_CONFIG']
  const walk = (schema: TSchema, path: string[]) => {
    if (schema.type === 'object' && schema.properties) {
      for (const [k, s] of Object.entries(schema.properties as Record<string, TSchema>)) walk(s, [...path, k])
    } else if (path.length > 0) out.push('OTPD_' + path.map((p) => p.toUpperCase()).join('__'))
  }
  walk(Config, [])
  return out
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]!
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
    let best = ''
    let bestD = Infinity
    for (const n of names) {
      const d = distance(name, n)
      if (d < bestD) [best, bestD] = [n, d]
    }
    warnings.push(`environment variable ${name} matches no setting and is ignored${bestD <= 3 ? ` (did you mean ${best}?)` : ''}`)
  }
  return warnings
}
