/** `otpd credits ...`: add, deduct, balance, history. */
import { Command, InvalidArgumentError } from 'commander'
import { MAX_GRANT } from '../otp/admin.ts'
import type { LedgerRow } from '../otp/ports/index.ts'
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

export function creditsCommand(): Command {
  const credits = new Command('credits').description("manage an account's credits (1 credit = 1 send)")
  defineAdd(credits)
  defineDeduct(credits)
  defineBalance(credits)
  defineHistory(credits)
  return credits
}

function defineAdd(credits: Command): void {
  subcommand(credits, 'add <amount>', 'add credits to an account', 'otpd credits add 1000', 'otpd credits add 500 --account acme --note "invoice 42"')
    .option('--account <account>', 'account to credit', 'default')
    .option('--note <text>', 'a note kept in the ledger')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((amount: string, opts: CommonOptions & { account: string; note?: string }) =>
      withCore(opts, async ({ admin }) => {
        const r = await admin.addCredits(amountArg(amount, 'deduct'), opts.account, opts.note)
        if (opts.json) return printJson(r)
        process.stdout.write(`added ${amount} credits to '${r.account}'; balance is now ${r.balance}\n`)
      }),
    )
}

function defineDeduct(credits: Command): void {
  subcommand(
    credits,
    'deduct <amount>',
    'take credits away from an account (a correction); never below zero',
    'otpd credits deduct 5 --note "refund of a double grant"',
  )
    .option('--account <account>', 'account to debit', 'default')
    .option('--note <text>', 'a note kept in the ledger')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((amount: string, opts: CommonOptions & { account: string; note?: string }) =>
      withCore(opts, async ({ admin }) => {
        const r = await admin.deductCredits(amountArg(amount, 'add'), { account: opts.account, note: opts.note })
        if (opts.json) return printJson(r)
        process.stdout.write(`deducted ${amount} credits from '${r.account}'; balance is now ${r.balance}\n`)
      }),
    )
}

function defineBalance(credits: Command): void {
  subcommand(credits, 'balance', "show an account's balance", 'otpd credits balance', 'otpd credits balance --account acme --json')
    .option('--account <account>', 'account', 'default')
    .action((opts: CommonOptions & { account: string }) =>
      withCore(
        opts,
        async ({ admin }) => {
          const r = await admin.balance(opts.account)
          if (opts.json) return printJson(r)
          process.stdout.write(`${r.account}: ${r.balance} credits\n`)
        },
        READ_ONLY,
      ),
    )
}

function defineHistory(credits: Command): void {
  subcommand(credits, 'history', "show an account's ledger, newest first", 'otpd credits history --limit 20')
    .option('--account <account>', 'account', 'default')
    .option('--limit <n>', 'number of entries', integerArg('--limit'), 50)
    .action((opts: CommonOptions & { account: string; limit: number }) =>
      withCore(
        opts,
        async ({ admin }) => {
          const r = await admin.history(opts.account, opts.limit)
          if (opts.json) {
            return printJson({
              account: r.account,
              entries: r.entries.map((e) => ({
                id: e.id,
                created_at: isoTime(e.createdAt),
                kind: e.kind,
                amount: signed(e),
                verification_id: e.verificationId,
                note: e.note,
              })),
            })
          }
          printListing(
            ['ID', 'TIME', 'KIND', 'AMOUNT', 'VERIFICATION', 'NOTE'],
            r.entries.map((e) => [e.id, formatTime(e.createdAt), e.kind, signed(e), e.verificationId ?? '-', e.note ?? '-']),
            noneYet(`otpd credits add AMOUNT${r.account === 'default' ? '' : ` --account ${r.account}`}`, `for account '${r.account}'`),
          )
        },
        READ_ONLY,
      ),
    )
}

const READ_ONLY = { readOnly: true }

/** An amount of credits; a negative one is told which command it wants. */
function amountArg(value: string, other: 'add' | 'deduct'): number {
  const range = `from 1 to ${MAX_GRANT}`
  if (/^-[0-9]+$/.test(value)) {
    throw new InvalidArgumentError(
      `amount must be a whole number ${range}, got '${value}'; to ${other === 'deduct' ? 'take credits away' : 'add credits'} use: otpd credits ${other} ${value.slice(1)}`,
    )
  }
  return integerArg('amount', ` ${range}`)(value)
}

/** Debits count down: the amounts of a full history add up to the balance. */
function signed(e: LedgerRow): number {
  return e.kind === 'debit' ? -e.amount : e.amount
}
