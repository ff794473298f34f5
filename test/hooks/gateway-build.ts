/**
 * The requests Auth0, authentik, Keycloak's sms-authenticator and Kratos's
 * courier make, built as each builds them (docs/integrations.md): for the
 * end-to-end tables of gateway-hooks.test.ts.
 */
import { SignJWT } from 'jose'
import { kratosBody, kratosContext } from './kratos-jsonnet.ts'

export interface GatewayRequest {
  raw: string
  headers: Record<string, string>
}

export const AUTH0_SECRET = 'auth0-gateway-secret-7f3a91c2'
export const AUTHENTIK_TOKEN = 'ak-sms-token-41d8e0'
export const KEYCLOAK_TOKEN = 'Bearer kc-api-secret-9b2f'
export const KRATOS_TOKEN = 'Bearer kratos-courier-5e1c'

/** Auth0's gateway payload with its bearer JWT (HS256, `sub` and `aud` of the connection), made with `jose`. */
export async function auth0Request(recipient: string, text: string, now: number, secret = AUTH0_SECRET): Promise<GatewayRequest> {
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('urn:Auth0')
    .setAudience('urn:otpd')
    .setIssuedAt(Math.floor(now / 1000))
    .sign(new TextEncoder().encode(secret))
  return {
    raw: JSON.stringify({ recipient, body: text, sender: '+15550001111' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
  }
}

/** Python's `json.dumps` of authentik's generic payload: `", "` and `": "`, non-ASCII escaped. */
function pythonJson(o: Record<string, string>): string {
  const ascii = (s: string) => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return `{${Object.entries(o)
    .map(([k, v]) => `${ascii(k)}: ${ascii(v)}`)
    .join(', ')}}`
}

export function authentikRequest(to: string, token: string, authorization = `Bearer ${AUTHENTIK_TOKEN}`): GatewayRequest {
  const raw = pythonJson({ From: '+15550001111', To: to, Body: token, Message: `Use this code to authenticate in authentik: ${token}` })
  return { raw, headers: { 'content-type': 'application/json', authorization } }
}

/** The plugin's hand-written JSON (`ApiSmsService.getJsonBody`, default attributes), the API secret in Authorization. */
export function keycloakRequest(to: string, text: string, authorization = KEYCLOAK_TOKEN): GatewayRequest {
  return { raw: `{"text":"${text}","to":"${to}","from":"Keycloak"}`, headers: { 'content-type': 'application/json', authorization } }
}

/** Kratos's SMS login code through the documented Jsonnet, for this recipient and code. */
export function kratosRequest(to: string, code: string, authorization = KRATOS_TOKEN): GatewayRequest {
  const ctx = kratosContext('sms-login-code')
  const data = ctx.template_data as Record<string, string>
  const body = String(ctx.body).replaceAll(data.login_code!, code)
  const raw = kratosBody({ ...ctx, recipient: to, body, template_data: { ...data, to, login_code: code } })
  return { raw, headers: { 'content-type': 'application/json', authorization } }
}
