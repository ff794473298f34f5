/** `otpd backup FILE`: an online, consistent copy of the database (store/sqlite/backup.ts), and where its secret is. */
import { Command } from 'commander'
import { backupDatabase } from '../store/sqlite/backup.ts'
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
      if (load(opts).config.database.url !== undefined) throw new Error(PG_BACKUP)
      return withCore(opts, async ({ db, config }) => {
        if (!db) throw new Error(PG_BACKUP)
        const b = backupDatabase(db.$client, config.database.path, file, { force: opts.force })
        // The secret's location only, never its value.
        const secret = config.server.secret !== undefined ? 'the server.secret setting' : secretPath(config.database.path)
        if (opts.json) return printJson({ file: b.file, bytes: b.bytes, database: config.database.path, secret })
        process.stdout.write(
          `backed up ${config.database.path} to ${b.file} (${size(b.bytes)})\n` +
            `Keep the server secret (${secret}) with this backup: without it no API key in the backup works.\n` +
            'To restore, see "Backup and restore" in /usr/share/doc/otpd/docs/operating.md (docs/operating.md in the repository).\n',
        )
      })
    })
}

const PG_BACKUP =
  'otpd backup copies a SQLite file, and this config uses PostgreSQL (database.url): back it up with pg_dump (e.g. pg_dump -Fc -f otpd.dump postgres://user@host:5432/otpd) and keep the server secret with it'

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
