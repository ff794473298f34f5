/** `otpd backup FILE`: an online, consistent copy of the database (the engine's backup, store/engine.ts), and where its secret is. */
import { Command } from 'commander'
import { checkBackupSupported } from '../store/open-engine.ts'
import { secretPath } from '../store/secret.ts'
import { example, load, printJson, withConfig, withCore, withJson, type CommonOptions } from './common.ts'

export function backupCommand(): Command {
  return example(
    withJson(withConfig(new Command('backup').description('copy the database into FILE while the server runs; keep the server secret with it'))),
    'otpd backup /var/backups/otpd-$(date +%F).db',
  )
    .argument('<file>', 'where to write the backup (a new file)')
    .option('--force', 'replace FILE if it exists')
    .action((file: string, opts: CommonOptions & { force?: boolean }) => {
      // Refused before connecting: the answer does not depend on the database.
      checkBackupSupported(load(opts).config)
      return withCore(
        opts,
        async ({ engine, config }) => {
          const b = await engine.backup(file, { force: opts.force })
          // The secret's location only, never its value.
          const secret = config.server.secret !== undefined ? 'the server.secret setting' : secretPath(config.database.path)
          if (opts.json) return printJson({ file: b.file, bytes: b.bytes, database: engine.display, secret })
          process.stdout.write(
            `backed up ${engine.display} to ${b.file} (${size(b.bytes)})\n` +
              `Keep the server secret (${secret}) with this backup: without it no API key in the backup works.\n` +
              'To restore it: stop otpd, then otpd restore FILE --secret SECRET-FILE (see "Backup and restore" in /usr/share/doc/otpd/docs/operating.md).\n',
          )
        },
        { readOnly: true },
      )
    })
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
