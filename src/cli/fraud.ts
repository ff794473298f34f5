/** `otpd fraud ...`: status, unblock (docs/fraud-guard.md). */
import { Command } from 'commander'
import type { Core } from '../app/index.ts'
import type { FraudStatus } from '../otp/fraud-admin.ts'
import { formatTime, isoTime, printJson, printTable, withCore, operatorOption, initOption, subcommand, type CommonOptions } from './common.ts'

export function fraudCommand(): Command {
  const fraud = new Command('fraud').description('the SMS pumping guard: what it blocks and why, and lifting a block')
  defineStatus(fraud)
  defineUnblock(fraud)
  return fraud
}

function defineStatus(fraud: Command): void {
  subcommand(
    fraud,
    'status',
    "each account's guard settings, active blocks (rule, scope, end), and sends, approvals and conversion by country over 24 h",
    'otpd fraud status',
    'otpd fraud status --account acme --json',
  )
    .option('--account <account>', 'one account (default: every account)')
    .action((opts: CommonOptions & { account?: string }) =>
      withCore(
        opts,
        async ({ fraud, config }) => {
          const s = await fraud.status(opts.account)
          if (opts.json) return printJson(statusJson(s, config))
          printStatus(s, config)
        },
        { readOnly: true },
      ),
    )
}

function statusJson(s: FraudStatus, config: Core['config']) {
  return {
    mode: config.fraud.mode,
    accounts: s.accounts.map((a) => ({
      account: a.name,
      countries: a.allowedCountries ?? config.fraud.allowed_countries,
      daily_credit_limit: a.dailyCreditLimit,
      test_recipients: a.testRecipients,
    })),
    blocks: s.blocks.map((b) => ({
      account: b.account,
      rule: b.rule,
      scope_kind: b.kind,
      scope: b.scope,
      level: b.level,
      started_at: isoTime(b.startedAt),
      ends_at: isoTime(b.until),
    })),
    countries: s.countries.map((c) => ({
      account: c.account,
      country: c.country,
      sends: c.sends,
      approved: c.approved,
      conversion: round(c.conversion),
    })),
  }
}

function printStatus(s: FraudStatus, config: Core['config']): void {
  const out = process.stdout
  out.write(`mode: ${config.fraud.mode} (config [fraud] mode)\n\nAccounts:\n`)
  printTable(
    ['ACCOUNT', 'COUNTRIES', 'DAILY CREDIT LIMIT', 'TEST RECIPIENTS'],
    s.accounts.map((a) => [
      a.name,
      (a.allowedCountries ?? config.fraud.allowed_countries).join(','),
      a.dailyCreditLimit ?? 'none',
      a.testRecipients ? 'on' : 'off',
    ]),
  )
  out.write('\nActive blocks:\n')
  if (s.blocks.length === 0) out.write('  none\n')
  else
    printTable(
      ['ACCOUNT', 'RULE', 'SCOPE', 'LEVEL', 'ENDS'],
      s.blocks.map((b) => [b.account, b.rule, b.scope, b.level, formatTime(b.until)]),
    )
  out.write('\nSends by country, last 24 h:\n')
  if (s.countries.length === 0) out.write('  none\n')
  else
    printTable(
      ['ACCOUNT', 'COUNTRY', 'SENDS', 'APPROVED', 'CONVERSION'],
      s.countries.map((c) => [c.account, c.country, c.sends, c.approved, `${(c.conversion * 100).toFixed(1)}%`]),
    )
}

function defineUnblock(fraud: Command): void {
  subcommand(
    fraud,
    'unblock <scope>',
    'end the block of a country (UZ) or prefix (+99890123), reset its escalation, and count its conversion afresh from now',
    'otpd fraud unblock UZ',
    'otpd fraud unblock +99890123 --account acme',
  )
    .option('--account <account>', 'account of the block', 'default')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((scope: string, opts: CommonOptions & { account: string }) =>
      withCore(opts, async ({ fraud }) => {
        const r = await fraud.unblock(scope, opts.account)
        if (opts.json) return printJson({ account: r.account, scope_kind: r.kind, scope: r.scope, was_blocked: r.wasBlocked })
        const what = `${r.kind} ${r.scope} of account '${r.account}'`
        process.stdout.write(
          r.wasBlocked
            ? `unblocked ${what}; its escalation is reset and its conversion counts from now\n`
            : `${what} was not blocked; its escalation is reset and its conversion counts from now\n`,
        )
      }),
    )
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000
}
