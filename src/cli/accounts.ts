/** `otpd accounts ...`: create, list, set. */
import { Command, InvalidArgumentError } from 'commander'
import { accountView, buildCatalogue, type Core } from '../app/index.ts'
import { HOST_NAME } from '../config/schema.ts'
import type { AccountFraudView } from '../otp/fraud-admin.ts'
import {
  formatTime,
  integerArg,
  isoTime,
  printJson,
  withCore,
  operatorOption,
  initOption,
  noneYet,
  printListing,
  subcommand,
  type CommonOptions,
} from './common.ts'

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('manage accounts (each has its own keys, credits and code length)')
  defineCreate(accounts)
  defineList(accounts)
  defineSet(accounts)
  return accounts
}

function defineCreate(accounts: Command): void {
  subcommand(accounts, 'create <name>', 'create an account', 'otpd accounts create acme')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((name: string, opts: CommonOptions) =>
      withCore(opts, async ({ admin }) => {
        const a = await admin.createAccount(name)
        if (opts.json) return printJson({ name: a.name, balance: a.balance, code_length: a.codeLength })
        process.stdout.write(`created account '${a.name}'\n`)
      }),
    )
}

/** An account the guard's listing missed (created between the two reads): the guard's defaults. */
const NO_GUARD_SETTINGS = { allowedCountries: null, dailyCreditLimit: null, testRecipients: true }

/** `accounts list`: the console's account view (console/views.ts), as a table or, without its two `_is_default` flags, as JSON. */
function defineList(accounts: Command): void {
  subcommand(
    accounts,
    'list',
    'list accounts with their balance, code length and fraud guard settings',
    'otpd accounts list',
    'otpd accounts list --json',
  ).action((opts: CommonOptions) => withCore(opts, (core) => listAccounts(core, opts), { readOnly: true }))
}

async function listAccounts({ admin, fraud, config }: Core, opts: CommonOptions): Promise<void> {
  const rows = await admin.listAccounts()
  const guard = new Map((await fraud.accounts()).map((f) => [f.name, f]))
  const views = rows.map((a) => ({ a, v: accountView(a, guard.get(a.name) ?? ({ name: a.name, ...NO_GUARD_SETTINGS } satisfies AccountFraudView), config) }))
  if (opts.json) {
    return printJson(
      views.map(({ a, v }) => {
        const { code_length_is_default: _length, countries_are_default: _countries, ...shown } = v
        // The default account's creation time is not recorded (0): null here, where the console shows the epoch.
        return { ...shown, created_at: isoTime(a.createdAt) }
      }),
    )
  }
  printListing(
    ['NAME', 'BALANCE', 'CODE LENGTH', 'COUNTRIES', 'DAILY CREDIT LIMIT', 'TEST RECIPIENTS', 'CREATED'],
    views.map(({ a, v }) => [
      v.name,
      v.balance,
      v.code_length_is_default ? `${v.code_length} (default)` : v.code_length,
      v.countries_are_default ? `${v.countries.join(',')} (default)` : v.countries.join(','),
      v.daily_credit_limit ?? 'none',
      v.test_recipients ? 'on' : 'off',
      formatTime(a.createdAt),
    ]),
    noneYet('otpd accounts create NAME'),
  )
}

function defineSet(accounts: Command): void {
  subcommand(
    accounts,
    'set <name>',
    "change an account's settings (at least one option)",
    'otpd accounts set default --code-length 8',
    'otpd accounts set acme --countries US,CA --daily-credit-limit 5000',
    "otpd accounts set acme --countries '*' --daily-credit-limit none --test-recipients off",
    'otpd accounts set acme --locale es --otp-domain login.example.com',
    'otpd accounts set acme --custom-text off',
  )
    .option('--code-length <n>', 'length of generated codes, 4-10', integerArg('--code-length'))
    .option(
      '--countries <list>',
      "destination countries allowed for sms, voice and whatsapp: ISO codes (US,CA), '*' for all, or 'default' for the config's lists",
      countriesArg,
    )
    .option('--daily-credit-limit <n>', "at most N send debits in a rolling 24 h (every channel), or 'none'", creditLimitArg)
    .option('--test-recipients <on|off>', 'off: the five test recipients are charged and delivered like any other (production accounts)', onOffArg)
    .option('--locale <tag>', "the language of the account's texts (es, pt-BR), or 'none' (docs/messages.md)", noneArg)
    .option('--otp-domain <host>', "append '@<host> #<code>' to the account's SMS (browser autofill), or 'none' for the config's", otpDomainArg)
    .option('--custom-text <on|off>', "off: a send's own message and subject are refused with a 400 (docs/api.md#send-request-body)", onOffArg)
    .addOption(operatorOption())
    .addOption(initOption())
    .action((name: string, opts: CommonOptions & SetOptions) => withCore(opts, (core) => setAccount(core, name, opts)))
}

async function setAccount({ admin, fraud, config }: Core, name: string, opts: CommonOptions & SetOptions): Promise<void> {
  // Commander keeps no null from a parser: `default` and `none` arrive as markers.
  const countries = opts.countries?.[0] === DEFAULT ? null : opts.countries
  const limit = opts.dailyCreditLimit === NONE ? null : opts.dailyCreditLimit
  const guard = { allowedCountries: countries, dailyCreditLimit: limit, testRecipients: opts.testRecipients }
  const changesGuard = Object.values(guard).some((v) => v !== undefined)
  const changesMessaging = opts.locale !== undefined || opts.otpDomain !== undefined || opts.customText !== undefined
  if (opts.codeLength === undefined && !changesGuard && !changesMessaging) {
    throw new Error('nothing to change: give --code-length, --countries, --daily-credit-limit, --test-recipients, --locale, --otp-domain or --custom-text')
  }
  const locale = localeArg(opts.locale, config)
  const lines: string[] = []
  let codeLength: number | null | undefined
  if (opts.codeLength !== undefined) {
    codeLength = (await admin.setCodeLength(name, opts.codeLength)).codeLength
    lines.push(`account '${name}' now gets ${codeLength}-digit codes`)
  }
  const f = changesGuard ? await fraud.setAccount(name, stripUndefined(guard)) : await fraud.account(name)
  lines.push(...guardLines(f, opts))
  let messaging: { locale: string | null; otpDomain: string | null; customText: boolean } | undefined
  if (changesMessaging) {
    const otpDomain = opts.otpDomain === undefined ? undefined : opts.otpDomain === NONE_TEXT ? null : opts.otpDomain
    messaging = await admin.setMessaging(name, stripUndefined({ locale, otpDomain, customText: opts.customText }))
    lines.push(...messagingLines(name, messaging, opts))
  }
  if (opts.json) {
    const custom = messaging && opts.customText !== undefined ? { custom_text: messaging.customText } : {}
    const texts = messaging ? { locale: messaging.locale, otp_domain: messaging.otpDomain, ...custom } : {}
    const length = codeLength === undefined ? {} : { code_length: codeLength }
    const settings = changesGuard ? { countries: f.allowedCountries, daily_credit_limit: f.dailyCreditLimit, test_recipients: f.testRecipients } : {}
    return printJson({ name: f.name, ...length, ...settings, ...texts })
  }
  process.stdout.write(lines.map((l) => l + '\n').join(''))
}

/** `--locale`: a language of the texts in force, null for 'none', undefined when not given. */
function localeArg(tag: string | undefined, config: Core['config']): string | null | undefined {
  if (tag === undefined) return undefined
  if (tag === NONE_TEXT) return null
  const catalogue = buildCatalogue(config)
  const locale = catalogue.resolve(tag)
  if (locale === null) throw new Error(`--locale '${tag}' is no language of the built-in texts or of a template (${catalogue.locales().join(', ')})`)
  return locale
}

/** What `accounts set` says of the guard settings it was given. */
function guardLines(f: AccountFraudView, opts: SetOptions): string[] {
  const lines: string[] = []
  if (opts.countries !== undefined) {
    const to =
      f.allowedCountries === null
        ? "the config's fraud.allowed_countries (whatsapp: fraud.whatsapp_allowed_countries, when set)"
        : f.allowedCountries.includes('*')
          ? 'every country'
          : f.allowedCountries.join(', ')
    lines.push(`account '${f.name}' may send sms, voice and whatsapp to ${to}`)
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
  return lines
}

/** What `accounts set` says of the texts' settings it was given. */
function messagingLines(name: string, messaging: { locale: string | null; otpDomain: string | null; customText: boolean }, opts: SetOptions): string[] {
  const lines: string[] = []
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
  if (opts.customText !== undefined) {
    lines.push(
      messaging.customText
        ? `account '${name}' may send its own message and subject`
        : `account '${name}' sends only the configured texts: a send's own message or subject is refused`,
    )
  }
  return lines
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
  customText?: boolean
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
