/**
 * Shared pieces of the WhatsApp tests (docs/delivery.md#whatsapp): a `whatsapp`
 * provider table pointing at a local stub of Meta's Graph API, Meta's answers
 * as its documentation shows them, and the events a server wrote.
 */
import { closeAfterTest } from './cleanup.ts'
import { harnessPerTest, type Harness } from './harness.ts'
import { startVendorStub, type VendorStub } from './vendor-stub.ts'

export const META_TOKEN = 'EAAJB-meta-access-token-0123456789'
export const META_ENV = { WHATSAPP_ACCESS_TOKEN: META_TOKEN, WHATSAPP_APP_SECRET: 'meta-app-secret-0123456789', WHATSAPP_VERIFY_TOKEN: 'verify-me-0123' }
export const PHONE_ID = '106540352242922'
export const WAMID = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA='

export const metaProvider = (url: string, more: Record<string, unknown> = {}) => ({
  type: 'whatsapp',
  phone_number_id: PHONE_ID,
  access_token_env: 'WHATSAPP_ACCESS_TOKEN',
  template: 'otp_code',
  languages: ['en_US', 'es', 'pt_BR'],
  app_secret_env: 'WHATSAPP_APP_SECRET',
  verify_token_env: 'WHATSAPP_VERIFY_TOKEN',
  base_url: url,
  ...more,
})

const start = harnessPerTest()

/** Meta's success answer (developers.facebook.com, sending authentication templates). */
export const metaAccepted = (id = WAMID) =>
  Response.json({ messaging_product: 'whatsapp', contacts: [{ input: '+5511987654321', wa_id: '5511987654321' }], messages: [{ id }] })
/** A Graph API error answer: `{ error: { message, type, code, error_data, fbtrace_id } }`. */
export const metaError = (status: number, code: number, message: string) =>
  Response.json(
    { error: { message, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: message }, fbtrace_id: 'AbC' } },
    { status },
  )

export async function metaSetup(
  opts: { answer?: (n: number) => Response; channels?: string[]; backup?: boolean; publicUrl?: boolean } = {},
): Promise<{ h: Harness; stub: VendorStub; backup: VendorStub }> {
  let n = 0
  const stub = startVendorStub(() => (opts.answer ?? ((i) => metaAccepted(i === 0 ? WAMID : `${WAMID}.${i}`)))(n++))
  const backup = startVendorStub(() => metaAccepted('wamid.BACKUP'))
  closeAfterTest(stub)
  closeAfterTest(backup)
  const h = await start({
    credits: 20,
    configuredDelivery: true,
    env: META_ENV,
    config: {
      server: opts.publicUrl === false ? {} : { public_url: 'https://otp.example.com' },
      providers: { meta: metaProvider(stub.url), meta_backup: metaProvider(backup.url) },
      channels: { whatsapp: opts.channels ?? (opts.backup ? ['meta', 'meta_backup'] : ['meta']) },
      limits: { recipient_per_minute: 100, recipient_per_hour: 100 },
    },
  })
  return { h, stub, backup }
}

/** The bodies of the events of `type` written so far (the outbox: docs/api.md#events). */
export async function eventBodies(h: Harness, type: string): Promise<Record<string, any>[]> {
  const rows = await h.sql('SELECT body FROM events WHERE type = $1 ORDER BY seq', [type])
  return rows.map((r) => JSON.parse(r.body as string) as Record<string, any>)
}
