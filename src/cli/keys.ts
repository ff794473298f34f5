/** `otpd keys ...`: create, list, enable, disable, revoke. */
import { Command } from 'commander'
import type { KeyRow } from '../otp/ports/index.ts'
import type { KeyStatus } from '../otp/types.ts'
import { formatTime, isoTime, printJson, withCore, operatorOption, initOption, noneYet, printListing, subcommand, type CommonOptions } from './common.ts'

/** A key as `--json` shows it (list, disable, enable, revoke): never its value or hash. */
function keyJson(k: KeyRow) {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    account: k.account,
    status: k.status,
    created_at: isoTime(k.createdAt),
    last_used_at: isoTime(k.lastUsedAt),
  }
}

export function keysCommand(): Command {
  const keys = new Command('keys').description('manage API keys')

  subcommand(
    keys,
    'create',
    'create an API key; its value is printed once and cannot be shown again',
    'otpd keys create --name backend',
    'otpd keys create --name shop --account acme --json',
  )
    .option('--name <name>', 'a label for people', '')
    .option('--account <account>', 'account the key belongs to', 'default')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((opts: CommonOptions & { name: string; account: string }) =>
      withCore(opts, async ({ admin }) => {
        const k = await admin.createKey({ name: opts.name, account: opts.account })
        if (opts.json) return printJson(k)
        process.stdout.write(
          `${k.key}\n\nCreated key ${k.id} (prefix ${k.prefix}) for account '${k.account}'.\n` +
            'Store it now: otpd keeps only a hash and cannot show it again.\n',
        )
      }),
    )

  subcommand(keys, 'list', 'list API keys (never their values)', 'otpd keys list', 'otpd keys list --account acme --json')
    .option('--account <account>', 'only keys of this account')
    .action((opts: CommonOptions & { account?: string }) =>
      withCore(
        opts,
        async ({ admin }) => {
          const rows = await admin.listKeys(opts.account)
          if (opts.json) return printJson(rows.map(keyJson))
          printListing(
            ['ID', 'PREFIX', 'NAME', 'ACCOUNT', 'STATUS', 'CREATED', 'LAST USED'],
            rows.map((k) => [k.id, k.prefix, k.name || '-', k.account, k.status, formatTime(k.createdAt), formatTime(k.lastUsedAt, 'never')]),
            opts.account === undefined
              ? noneYet('otpd keys create --name NAME')
              : noneYet(`otpd keys create --name NAME --account ${opts.account}`, `for account '${opts.account}'`),
          )
        },
        { readOnly: true },
      ),
    )

  const setStatus = (verb: string, status: KeyStatus, what: string) =>
    subcommand(keys, `${verb} <id-or-prefix>`, what, `otpd keys ${verb} 3`, `otpd keys ${verb} Ab3dE9xQ`)
      .addOption(operatorOption())
      .addOption(initOption())
      .action((ref: string, opts: CommonOptions) =>
        withCore(opts, async ({ admin }) => {
          const k = await admin.setKeyStatus(ref, status)
          if (opts.json) return printJson(keyJson(k))
          process.stdout.write(`key ${k.id} (${k.prefix}) is now ${k.status}\n`)
        }),
      )
  setStatus('disable', 'disabled', 'disable a key: requests with it get 403 until it is enabled again')
  setStatus('enable', 'active', 'enable a disabled key again')
  setStatus('revoke', 'revoked', 'revoke a key for good: requests with it get 401; it cannot be enabled again')
  return keys
}
