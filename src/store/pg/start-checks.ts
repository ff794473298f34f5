/**
 * Start checks of the PostgreSQL engine, as store/sqlite/start-checks.ts does for
 * SQLite: a node refuses to start, with one sentence, rather than run with a
 * secret other than the one the database's hashes were made with. The
 * database keeps the secret's fingerprint (store/secret.ts) in `settings`;
 * the first node to start on an empty database records it. Nodes starting
 * together decide under the start lock (store/pg/migrate.ts START_LOCK), so
 * they cannot record two different fingerprints.
 */
import type { SQL } from 'bun'
import { sameHex, secretFingerprint, type ConfiguredSecret } from '../secret.ts'
import { StoreRefusedError } from '../refused.ts'

/** The advisory lock key of migrations and of the secret check at start ('otpd' in ASCII, then 1). */
export const START_LOCK = 0x6f747064_00000001n

const FINGERPRINT = 'secret_fingerprint'

export async function checkSecret(sql: SQL, secret: ConfiguredSecret, display: string): Promise<void> {
  const fingerprint = secretFingerprint(secret.bytes)
  await sql.begin(async (tx) => {
    await tx.unsafe('SELECT pg_advisory_xact_lock($1::bigint)', [START_LOCK.toString()])
    const rows = (await tx.unsafe('SELECT value FROM settings WHERE name = $1', [FINGERPRINT])) as { value: string }[]
    const stored = rows[0]?.value
    if (stored === undefined) {
      const keys = (await tx.unsafe('SELECT count(*)::int AS n FROM api_keys')) as { n: number }[]
      if ((keys[0]?.n ?? 0) > 0) {
        // A database filled without a fingerprint (copied by hand): nothing says which secret it needs.
        throw new StoreRefusedError(
          `the PostgreSQL database ${display} holds API keys but no secret fingerprint: copy it with \`otpd db copy\`, which records the fingerprint`,
        )
      }
      await tx.unsafe('INSERT INTO settings (name, value) VALUES ($1, $2)', [FINGERPRINT, fingerprint])
      return
    }
    if (!sameHex(stored, fingerprint)) {
      throw new StoreRefusedError(
        `${secret.source === 'server.secret' ? 'the server.secret setting' : secret.source} does not hold the secret the PostgreSQL database ${display} was made with: give every node the same secret (a new secret would make every key invalid)`,
      )
    }
  })
}
