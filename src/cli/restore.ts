/**
 * `otpd restore FILE` (docs/operating.md#backup-and-restore): a backup made
 * by `otpd backup` put in the place of the database, checked first
 * (store/sqlite/restore.ts), then opened as the server would open it.
 */
import { Command } from 'commander'
import { restoreBackup } from '../store/open-engine.ts'
import { example, load, openForCli, printJson, withConfig, withJson, type CommonOptions } from './common.ts'

export function restoreCommand(): Command {
  return example(
    withJson(
      withConfig(
        new Command('restore').description(
          'put a backup made by otpd backup in the place of the database (stop otpd first); the database it replaces is kept beside it',
        ),
      ),
    ),
    'sudo systemctl stop otpd',
    'sudo -u otpd otpd restore /srv/backups/otpd-2026-11-23.db --secret /srv/backups/otpd.secret --config /etc/otpd/otp.config.toml',
    'sudo systemctl start otpd',
  )
    .argument('<file>', 'the backup')
    .option('--secret <file>', 'the otpd.secret kept with the backup (when the config gives no server.secret and the one beside the database is not it)')
    .action(async (file: string, opts: CommonOptions & { secret?: string }) => {
      const { config, env } = load(opts)
      const r = restoreBackup(config, env, { file, secretFile: opts.secret, now: Date.now() })
      // Opened as the server opens it: migrations of an older backup applied, the secret checked again.
      const core = await openForCli(opts, { readOnly: true })
      const accounts = await core.admin.listAccounts().finally(() => core.engine.close())
      if (opts.json) return printJson({ database: r.database, replaced: r.replaced, secret: r.secret, keys: r.keys, accounts: accounts.length })
      process.stdout.write(
        `restored ${file} to ${r.database} (${r.keys} API key${r.keys === 1 ? '' : 's'}, ${accounts.length} account${accounts.length === 1 ? '' : 's'}); server secret: ${r.secret}\n` +
          (r.replaced === null ? '' : `The database it replaced is kept at ${r.replaced}: delete it once the restore is right.\n`) +
          'Start otpd again (systemctl start otpd).\n',
      )
    })
}
