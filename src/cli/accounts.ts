/** `otpd accounts ...`: create, list, set. */
import { Command, InvalidArgumentError } from 'commander'
import { example, formatTime, integerArg, isoTime, noneYet, printJson, printListing, withConfig, withCore, withJson, type CommonOptions } from './common.ts'

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('manage accounts (each has its own keys, credits and code length)')

  example(withJson(withConfig(accounts.command('create <name>').description('create an account'))), 'otpd accounts create acme').action(
    (name: string, opts: CommonOptions) =>
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
  )
    .option('--code-length <n>', 'length of generated codes, 4-10', integerArg('--code-length'))
    .option(
      '--countries <list>',
      "destination countries allowed for sms and voice: ISO codes (US,CA), '*' for all, or 'default' for the config's fraud.allowed_countries",
      countriesArg,
    )
    .option('--daily-credit-limit <n>', "at most N send debits in a rolling 24 h (every channel), or 'none'", creditLimitArg)
    .option('--test-recipients <on|off>', 'off: the five test recipients are charged and delivered like any other (production accounts)', onOffArg)
    .action((name: string, opts: CommonOptions & SetOptions) =>
      withCore(opts, async ({ admin, fraud }) => {
        // Commander keeps no null from a parser: `default` and `none` arrive as markers.
        const countries = opts.countries?.[0] === DEFAULT ? null : opts.countries
        const limit = opts.dailyCreditLimit === NONE ? null : opts.dailyCreditLimit
        const guard = { allowedCountries: countries, dailyCreditLimit: limit, testRecipients: opts.testRecipients }
        const changesGuard = Object.values(guard).some((v) => v !== undefined)
        if (opts.codeLength === undefined && !changesGuard) {
          throw new Error('nothing to change: give --code-length, --countries, --daily-credit-limit or --test-recipients')
        }
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
        if (opts.json) {
          const length = codeLength === undefined ? {} : { code_length: codeLength }
          const settings = changesGuard ? { countries: f.allowedCountries, daily_credit_limit: f.dailyCreditLimit, test_recipients: f.testRecipients } : {}
          return printJson({ name: f.name, ...length, ...settings })
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
