/** The hooks' keys (otp/ports/hooks.ts) for both engines, over a `Runner`. */
import type { HookKey, HookKeyStore } from '../../otp/ports/index.ts'
import type { Runner } from './stats-store.ts'
import { num, numOrNull, type Row } from './values.ts'

const COLUMNS = 'id, hook, account_id, last_used_at'
/** Not a key's display prefix: a presented key is looked up by its first characters, which never read `hook`. */
export const HOOK_KEY_PREFIX = 'hook'

export const HOOK_SQL = {
  find: `SELECT ${COLUMNS} FROM api_keys WHERE hook = $1`,
  insert: `INSERT INTO api_keys (account_id, name, prefix, key_hash, created_at, hook) VALUES ($1, $2, '${HOOK_KEY_PREFIX}', $3, $4, $5) RETURNING id`,
  moveTo: 'UPDATE api_keys SET account_id = $2 WHERE id = $1',
  list: `SELECT ${COLUMNS} FROM api_keys WHERE hook IS NOT NULL ORDER BY hook`,
} as const

function toHookKey(r: Row): HookKey {
  return { id: num(r.id), hook: r.hook as string, accountId: num(r.account_id), lastUsedAt: numOrNull(r.last_used_at) }
}

export class SqlHookKeyStore implements HookKeyStore {
  constructor(private readonly db: Runner) {}

  async find(hook: string): Promise<HookKey | undefined> {
    const [row] = await this.db.all(HOOK_SQL.find, [hook])
    return row === undefined ? undefined : toHookKey(row)
  }

  async insert(k: { hook: string; accountId: number; keyHash: string; at: number }): Promise<number> {
    const [row] = await this.db.all(HOOK_SQL.insert, [k.accountId, `hook:${k.hook}`, k.keyHash, k.at, k.hook])
    return num(row!.id)
  }

  moveTo(keyId: number, accountId: number): Promise<void> {
    return this.db.run(HOOK_SQL.moveTo, [keyId, accountId])
  }

  async list(): Promise<HookKey[]> {
    return (await this.db.all(HOOK_SQL.list, [])).map(toHookKey)
  }
}
