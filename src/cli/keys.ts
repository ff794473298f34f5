/** `otpd keys ...`: create, list, enable, disable, revoke. */
import { Command } from 'commander'
import type { KeyRow } from '../otp/ports/index.ts'
import type { KeyStatus } from '../otp/types.ts'
import { DEFAULT_ROTATION_GRACE_MS } from '../otp/admin.ts'
import {
  durationArg,
  formatTime,
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

/** What a key's status is for its reader: a rotated key past its grace is `expired` (refused as a revoked one). */
function statusOf(k: KeyRow, now = Date.now()): string {
  return k.status === 'active' && k.expiresAt !== null && now >= k.expiresAt ? 'expired' : k.status
}

/** A key as `--json` shows it (list, disable, enable, revoke): never its value or hash. */
function keyJson(k: KeyRow) {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    account: k.account,
    status: statusOf(k),
    created_at: isoTime(k.createdAt),
    last_used_at: isoTime(k.lastUsedAt),
    expires_at: isoTime(k.expiresAt),
  }
}

/** `otpd keys rotate`: a new key for the same account and name; the old one works until the grace period ends. */
function defineRotate(keys: Command): void {
  subcommand(
    keys,
    'rotate <id-or-prefix>',
    'create a new key for the same account and name; the old one keeps working for --grace (default 24h), then is refused as revoked',
    'otpd keys rotate 3',
    'otpd keys rotate Ab3dE9xQ --grace 7d --json',
  )
    .option(
      '--grace <period>',
      'how long the old key keeps working: 30m, 24h, 7d, up to 30d; 0 revokes it at once',
      durationArg('--grace'),
      DEFAULT_ROTATION_GRACE_MS,
    )
    .addOption(operatorOption())
    .addOption(initOption())
    .action((ref: string, opts: CommonOptions & { grace: number }) =>
      withCore(opts, async ({ admin }) => {
        const k = await admin.rotateKey(ref, opts.grace)
        if (opts.json) return printJson({ key: k.key, id: k.id, prefix: k.prefix, name: k.name, account: k.account, replaced: keyJson(k.replaced) })
        const old = k.replaced
        process.stdout.write(
          `${k.key}\n\nCreated key ${k.id} (prefix ${k.prefix}) for account '${k.account}' in place of key ${old.id} (${old.prefix}).\n` +
            (old.status === 'revoked'
              ? `Key ${old.id} is revoked now.\n`
              : `Key ${old.id} keeps working until ${formatTime(old.expiresAt)}; then it is refused as revoked.\n`) +
            'Store the new key now: otpd keeps only a hash and cannot show it again.\n',
        )
      }),
    )
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
            // EXPIRES only when a rotated key is listed: the others never expire.
            rows.some((k) => k.expiresAt !== null)
              ? ['ID', 'PREFIX', 'NAME', 'ACCOUNT', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES']
              : ['ID', 'PREFIX', 'NAME', 'ACCOUNT', 'STATUS', 'CREATED', 'LAST USED'],
            rows.map((k) => [
              k.id,
              k.prefix,
              k.name || '-',
              k.account,
              statusOf(k),
              formatTime(k.createdAt),
              formatTime(k.lastUsedAt, 'never'),
              ...(rows.some((x) => x.expiresAt !== null) ? [formatTime(k.expiresAt)] : []),
            ]),
            opts.account === undefined
              ? noneYet('otpd keys create --name NAME')
              : noneYet(`otpd keys create --name NAME --account ${opts.account}`, `for account '${opts.account}'`),
          )
        },
        { readOnly: true },
      ),
    )

  defineRotate(keys)

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
