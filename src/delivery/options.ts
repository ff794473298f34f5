/**
 * Reads one `[providers.NAME]` table for a provider type: each getter returns
 * the value (or undefined) and records a problem, as a sentence naming the key,
 * when the value is missing or wrong. Secrets are read from the environment
 * variable a `*_env` key names and are never echoed.
 */
import { readFileSync } from 'node:fs'
import { didYouMean } from '../lib/nearest-name.ts'

export type Env = Record<string, string | undefined>

/** Environment variable names we are willing to echo in a message: a password typed into `*_env` is not echoed. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/

export class ProviderOptions {
  readonly problems: string[] = []
  private readonly read = new Set<string>(['type'])

  constructor(
    readonly name: string,
    private readonly raw: Record<string, unknown>,
    private readonly env: Env,
  ) {}

  key(k: string): string {
    return `providers.${this.name}.${k}`
  }

  problem(sentence: string): void {
    this.problems.push(sentence)
  }

  has(k: string): boolean {
    return this.raw[k] !== undefined && this.raw[k] !== ''
  }

  string(k: string, opts: { required?: string | false; default?: string; test?: (v: string) => string | undefined } = {}): string | undefined {
    this.read.add(k)
    const v = this.raw[k]
    if (v === undefined || v === '') {
      if (opts.required) this.problem(`${this.key(k)} is missing: ${opts.required}`)
      return opts.default
    }
    if (typeof v !== 'string') {
      this.problem(`${this.key(k)} must be a string (got ${JSON.stringify(v)})`)
      return opts.default
    }
    const wrong = opts.test?.(v)
    if (wrong) {
      this.problem(`${this.key(k)} ${wrong}`)
      return opts.default
    }
    return v
  }

  /** A non-empty list of strings, each passing `test` (which returns what is wrong with one, or undefined). */
  stringList(k: string, opts: { required?: string | false; test?: (v: string) => string | undefined } = {}): string[] | undefined {
    this.read.add(k)
    const v = this.raw[k]
    if (v === undefined) {
      if (opts.required) this.problem(`${this.key(k)} is missing: ${opts.required}`)
      return undefined
    }
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'string')) {
      this.problem(`${this.key(k)} must be a non-empty list of strings (got ${JSON.stringify(v)})`)
      return undefined
    }
    for (const x of v as string[]) {
      const wrong = opts.test?.(x)
      if (wrong) {
        this.problem(`${this.key(k)} has ${JSON.stringify(x)}, which ${wrong}`)
        return undefined
      }
    }
    return v as string[]
  }

  oneOf<T extends string>(k: string, values: readonly T[], def: T): T {
    const v = this.string(k, { default: def })
    if (v !== undefined && !values.includes(v as T)) {
      this.problem(`${this.key(k)} must be one of: ${values.join(', ')} (got ${JSON.stringify(v)})`)
      return def
    }
    return v as T
  }

  port(k: string, def: number): number {
    this.read.add(k)
    const v = this.raw[k]
    if (v === undefined) return def
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
      this.problem(`${this.key(k)} must be a port number from 1 to 65535 (got ${JSON.stringify(v)})`)
      return def
    }
    return v
  }

  integer(k: string, min: number, max: number, def: number): number {
    this.read.add(k)
    const v = this.raw[k]
    if (v === undefined) return def
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      this.problem(`${this.key(k)} must be an integer from ${min} to ${max} (got ${JSON.stringify(v)})`)
      return def
    }
    return v
  }

  url(k: string, def: string): string {
    return (
      this.string(k, {
        default: def,
        test: (v) => {
          let u: URL
          try {
            u = new URL(v)
          } catch {
            return `must be an http:// or https:// URL (got ${JSON.stringify(v)})`
          }
          if (u.protocol !== 'https:' && u.protocol !== 'http:') return `must be an http:// or https:// URL (got ${JSON.stringify(v)})`
          if (u.username || u.password) return "must not carry credentials; use the provider's *_env settings"
          return undefined
        },
      }) ?? def
    ).replace(/\/+$/, '')
  }

  /** `k` names an environment variable (`password_env = "OTPD_SMTP_PASSWORD"`); returns its value. */
  secret(k: string, required: string | false): string | undefined {
    this.read.add(k)
    const v = this.raw[k]
    if (v === undefined || v === '') {
      if (required) this.problem(`${this.key(k)} is missing: ${required}`)
      return undefined
    }
    if (typeof v !== 'string' || !ENV_NAME.test(v)) {
      this.problem(
        `${this.key(k)} must name an environment variable in capitals, such as OTPD_SECRET (the secret itself goes in that variable, not in the file)`,
      )
      return undefined
    }
    const value = this.env[v]
    if (value === undefined) {
      this.problem(`${this.key(k)} names ${v}, which is not set`)
      return undefined
    }
    if (value === '') {
      this.problem(`${this.key(k)} names ${v}, which is empty`)
      return undefined
    }
    return value
  }

  /** A file path; returns the file's text. */
  file(k: string, required: string | false): string | undefined {
    const path = this.string(k, { required })
    if (path === undefined) return undefined
    try {
      return readFileSync(path, 'utf8')
    } catch (err) {
      this.problem(`${this.key(k)} names ${path}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`)
      return undefined
    }
  }

  /** Keys of the table no getter asked for. Call after reading everything. */
  unknownKeys(type: string): void {
    for (const k of Object.keys(this.raw)) {
      if (!this.read.has(k))
        this.problem(
          `${this.key(k)} is not a setting of a '${type}' provider${didYouMean(
            this.key(k),
            [...this.read].map((r) => this.key(r)),
          )}`,
        )
    }
  }
}
