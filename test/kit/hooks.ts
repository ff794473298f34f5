/**
 * Hook tests (docs/integrations.md): a harness with one `[hooks.NAME]`, the
 * raw request an identity server makes, and what it left in the database.
 */
import type { Harness, HarnessOptions, Result } from './harness.ts'

/** POSTs `raw` to /hooks/NAME with exactly `headers` (no API key). */
export async function hookCall(h: Harness, name: string, raw: string, headers: Record<string, string>): Promise<Result & { text: string }> {
  const res = await h.server.http.handle(new Request(`http://localhost/hooks/${name}`, { method: 'POST', headers, body: raw }))
  const text = await res.text()
  let json: Record<string, any> = {}
  try {
    json = text ? JSON.parse(text) : {}
  } catch {}
  return { status: res.status, headers: res.headers, json, text }
}

/** The options of a harness whose config has `hooks` and whose environment has `env`. */
export function withHooks(hooks: Record<string, Record<string, unknown>>, env: Record<string, string>, opts: HarnessOptions = {}): HarnessOptions {
  return { credits: 10, ...opts, env: { ...env, ...(opts.env ?? {}) }, config: { ...(opts.config ?? {}), hooks } }
}

/** What the hooks' sends wrote: verifications (with `checked_by`), ledger debits, and hook keys. */
export async function written(h: Harness): Promise<{ verifications: Record<string, any>[]; debits: number; hookKeys: number; keyHits: number }> {
  await h.server.storage.settled()
  const verifications = await h.sql('SELECT id, channel, checked_by, recipient_mask, delivery FROM verifications ORDER BY seq')
  const [d] = await h.sql("SELECT count(*) AS n FROM credit_ledger WHERE kind = 'debit'")
  const [k] = await h.sql('SELECT count(*) AS n FROM api_keys WHERE hook IS NOT NULL')
  const [hits] = await h.sql('SELECT count(*) AS n FROM key_hits')
  return { verifications, debits: Number(d!.n), hookKeys: Number(k!.n), keyHits: Number(hits!.n) }
}

/** The balance of the default account. */
export async function balance(h: Harness): Promise<number> {
  return (await h.server.admin.listAccounts()).find((a) => a.name === 'default')!.balance
}
