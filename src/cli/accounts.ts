/** `otpd accounts ...`: create, list, set. */
import { Command, InvalidArgumentError } from 'commander'
import { buildCatalogue } from '../app/index.ts'
import { HOST_NAME } from '../config/schema.ts'
import {
  example,
  formatTime,
  integerArg,
  isoTime,
  printJson,
  withConfig,
  withCore,
  withJson,
  operatorOption,
  noneYet,
  printListing,
  type CommonOptions,
} from './common.ts'

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('manage accounts (each has its own keys, credits and code length)')

  example(withJson(withConfig(accounts.command('create <name>').description('create an account'))), 'otpd accounts create acme')
    .addOption(operatorOption())
    .action((name: string, opts: CommonOptions) =>
      withCore(opts, async ({ admin }) => {
        const a = await admin.createAccount(name)
        if (opts.json) return printJson({ name: a.name, balance: a.balance, code_length: a.codeLength })
        process.stdout.write(`created account '${a.name}'\n`)
      }),
    )

  example(
    withJson(withConfig(accounts.command('list').description('list accounts with their balance, code length and fraud guard settings'))),
    'otpd accounts list',
    'otpd accounts list --json',
  ).action((opts: CommonOptions) =>
    withCore(
      opts,
      async ({ admin, fraud, config }) => {
        const rows = await admin.listAccounts()
        const guard = new Map((await fraud.accounts()).map((f) => [f.name, f]))
        const length = (n: number | null) => n ?? config.codes.default_length
        // null: the config's fraud.allowed_countries, as `accounts set --countries default` puts it.
        const countries = (name: string) => guard.get(name)?.allowedCountries ?? null
        if (opts.json)
          return printJson(
            rows.map((a) => ({
              name: a.name,
              balance: a.balance,
              code_length: length(a.codeLength),
              countries: countries(a.name) ?? config.fraud.allowed_countries,
              daily_credit_limit: guard.get(a.name)?.dailyCreditLimit ?? null,
              test_recipients: guard.get(a.name)?.testRecipients ?? true,
              created_at: isoTime(a.createdAt),
            })),
          )
        printListing(
          ['NAME', 'BALANCE', 'CODE LENGTH', 'COUNTRIES', 'DAILY CREDIT LIMIT', 'TEST RECIPIENTS', 'CREATED'],
          rows.map((a) => {
            const g = guard.get(a.name)
            return [
              a.name,
              a.balance,
              a.codeLength === null ? `${length(null)} (default)` : a.codeLength,
              countries(a.name)?.join(',') ?? `${config.fraud.allowed_countries.join(',')} (default)`,
              g?.dailyCreditLimit ?? 'none',
              g === undefined || g.testRecipients ? 'on' : 'off',
              formatTime(a.createdAt),
            ]
          }),
          noneYet('otpd accounts create NAME'),
        )
      },
      { readOnly: true },
    ),
  )

  example(
    withJson(withConfig(accounts.command('set <name>').description("change an account's settings (at least one option)"))),
    'otpd accounts set default --code-length 8',
    'otpd accounts set acme --countries US,CA --daily-credit-limit 5000',
    "otpd accounts set acme --countries '*' --daily-credit-limit none --test-recipients off",
    'otpd accounts set acme --locale es --otp-domain login.example.com',
  )
    .option('--code-length <n>', 'length of generated codes, 4-10', integerArg('--code-length'))
    .option(
      '--countries <list>',
      "destination countries allowed for sms and voice: ISO codes (US,CA), '*' for all, or 'default' for the config's fraud.allowed_countries",
      countriesArg,
    )
    .option('--daily-credit-limit <n>', "at most N send debits in a rolling 24 h (every channel), or 'none'", creditLimitArg)
    .option('--test-recipients <on|off>', 'off: the five test recipients are charged and delivered like any other (production accounts)', onOffArg)
    .option('--locale <tag>', "the language of the account's texts (es, pt-BR), or 'none' (docs/messages.md)", noneArg)
    .option('--otp-domain <host>', "append '@<host> #<code>' to the account's SMS (browser autofill), or 'none' for the config's", otpDomainArg)
    .addOption(operatorOption())
    .action((name: string, opts: CommonOptions & SetOptions) =>
      withCore(opts, async ({ admin, fraud, config }) => {
        // Commander keeps no null from a parser: `default` and `none` arrive as markers.
        const countries = opts.countries?.[0] === DEFAULT ? null : opts.countries
        const limit = opts.dailyCreditLimit === NONE ? null : opts.dailyCreditLimit
        const guard = { allowedCountries: countries, dailyCreditLimit: limit, testRecipients: opts.testRecipients }
        const changesGuard = Object.values(guard).some((v) => v !== undefined)
        const changesMessaging = opts.locale !== undefined || opts.otpDomain !== undefined
        if (opts.codeLength === undefined && !changesGuard && !changesMessaging) {
          throw new Error('nothing to change: give --code-length, --countries, --daily-credit-limit, --test-recipients, --locale or --otp-domain')
        }
        let locale: string | null | undefined
        if (opts.locale !== undefined && opts.locale !== NONE_TEXT) {
          const catalogue = buildCatalogue(config)
          locale = catalogue.resolve(opts.locale)
          if (locale === null)
            throw new Error(`--locale '${opts.locale}' is no language of the built-in texts or of a template (${catalogue.locales().join(', ')})`)
        } else if (opts.locale === NONE_TEXT) locale = null
        const lines: string[] = []
        let codeLength: number | null | undefined
        if (opts.codeLength !== undefined) {
          codeLength = (await admin.setCodeLength(name, opts.codeLength)).codeLength
          lines.push(`account '${name}' now gets ${codeLength}-digit codes`)
        }
        const f = changesGuard ? await fraud.setAccount(name, stripUndefined(guard)) : await fraud.account(name)
        if (opts.countries !== undefined) {
          lines.push(
            `account '${f.name}' may send sms and voice to ${f.allowedCountries === null ? "the config's fraud.allowed_countries" : f.allowedCountries.includes('*') ? 'every country' : f.allowedCountries.join(', ')}`,
          )
        }
        if (opts.dailyCreditLimit !== undefined) {
          lines.push(
            f.dailyCreditLimit === null
              ? `account '${f.name}' has no daily credit limit`
              : `account '${f.name}' may spend at most ${f.dailyCreditLimit} credits in any 24 h`,
          )
        }
        if (opts.testRecipients !== undefined) {
          lines.push(
            f.testRecipients
              ? `account '${f.name}' answers the test recipients without delivering or charging`
              : `account '${f.name}' treats the test recipients like any other recipient (charged and delivered)`,
          )
        }
        let messaging: { locale: string | null; otpDomain: string | null } | undefined
        if (changesMessaging) {
          const otpDomain = opts.otpDomain === undefined ? undefined : opts.otpDomain === NONE_TEXT ? null : opts.otpDomain
          messaging = await admin.setMessaging(name, stripUndefined({ locale, otpDomain }))
          if (opts.locale !== undefined) {
            lines.push(
              messaging.locale === null
                ? `account '${name}' has no language of its own: the send's locale, the country (if on) or messages.default_locale decide`
                : `account '${name}' gets texts in '${messaging.locale}' unless a send names its locale`,
            )
          }
          if (opts.otpDomain !== undefined) {
            lines.push(
              messaging.otpDomain === null
                ? `account '${name}' uses the config's messages.otp_domain for SMS autofill`
                : `account '${name}' ends each SMS with '@${messaging.otpDomain} #<code>'`,
            )
          }
        }
        if (opts.json) {
          const texts = messaging ? { locale: messaging.locale, otp_domain: messaging.otpDomain } : {}
          const length = codeLength === undefined ? {} : { code_length: codeLength }
          const settings = changesGuard ? { countries: f.allowedCountries, daily_credit_limit: f.dailyCreditLimit, test_recipients: f.testRecipients } : {}
          return printJson({ name: f.name, ...length, ...settings, ...texts })
        }
        process.stdout.write(lines.map((l) => l + '\n').join(''))
      }),
    )
  return accounts
}

const DEFAULT = 'default'
const NONE = -1

interface SetOptions {
  codeLength?: number
  countries?: string[]
  dailyCreditLimit?: number
  testRecipients?: boolean
  locale?: string
  otpDomain?: string
}

const NONE_TEXT = 'none'

/** A value, or 'none' (checked where the texts in force are known). */
function noneArg(value: string): string {
  return value.trim()
}

function otpDomainArg(value: string): string {
  const v = value.trim()
  if (v === NONE_TEXT || new RegExp(HOST_NAME).test(v)) return v
  throw new InvalidArgumentError(`--otp-domain must be a host name such as example.com (lower case, no scheme, no port) or 'none', got '${value}'`)
}

/** `US,CA` (case-insensitive), `*`, or `default` (the config's list). Known codes are checked by the domain. */
function countriesArg(value: string): string[] {
  const v = value.trim()
  if (v === 'default') return [DEFAULT]
  if (v === '*') return ['*']
  const list = v.split(',').map((c) => c.trim().toUpperCase())
  if (list.some((c) => !/^[A-Z]{2}$/.test(c)))
    throw new InvalidArgumentError(`--countries takes country codes separated by commas (US,CA), '*' or 'default', got '${value}'`)
  return [...new Set(list)]
}

function creditLimitArg(value: string): number {
  if (value === 'none') return NONE
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`--daily-credit-limit must be a whole number of at least 1 or 'none', got '${value}'`)
  }
  return Number(value)
}

function onOffArg(value: string): boolean {
  if (value === 'on') return true
  if (value === 'off') return false
  throw new InvalidArgumentError(`--test-recipients must be on or off, got '${value}'`)
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
