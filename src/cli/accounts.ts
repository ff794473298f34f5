/** `otpd accounts ...`: create, list, set. */
import { Command } from 'commander'
import { example, formatTime, integerArg, isoTime, printJson, printTable, withConfig, withCore, withJson, type CommonOptions } from './common.ts'

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

  example(withJson(withConfig(accounts.command('list').description('list accounts'))), 'otpd accounts list').action((opts: CommonOptions) =>
    withCore(opts, async ({ admin, config }) => {
      const rows = await admin.listAccounts()
      const length = (n: number | null) => n ?? config.codes.default_length
      if (opts.json) return printJson(rows.map((a) => ({ name: a.name, balance: a.balance, code_length: length(a.codeLength), created_at: isoTime(a.createdAt) })))
      printTable(
        ['NAME', 'BALANCE', 'CODE LENGTH', 'CREATED'],
        rows.map((a) => [a.name, a.balance, a.codeLength === null ? `${length(null)} (default)` : a.codeLength, formatTime(a.createdAt)]),
      )
    }, { readOnly: true }),
  )

  example(withJson(withConfig(accounts.command('set <name>').description("change an account's settings"))), 'otpd accounts set default --code-length 8')
    .requiredOption('--code-length <n>', 'length of generated codes, 4-10', integerArg('--code-length'))
    .action((name: string, opts: CommonOptions & { codeLength: number }) =>
      withCore(opts, async ({ admin }) => {
        const a = await admin.setCodeLength(name, opts.codeLength)
        if (opts.json) return printJson({ name: a.name, code_length: a.codeLength })
        process.stdout.write(`account '${a.name}' now gets ${a.codeLength}-digit codes\n`)
      }),
    )
  return accounts
}
