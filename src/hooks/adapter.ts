/**
 * What each identity server's hook type implements: how its
 * requests are authenticated, what one request asks otpd to deliver, and how an
 * answer is written in the shape that identity server reads. One file per type
 * beside this one; the route and the delivery semantics are shared.
 */

export const HOOK_TYPES = ['supabase', 'zitadel', 'logto', 'auth0', 'authentik', 'keycloak', 'kratos'] as const
export type HookType = (typeof HOOK_TYPES)[number]

/** One `[hooks.NAME]` table as the adapter sees it, its secrets already read from the environment. */
export interface HookSettings {
  readonly name: string
  readonly type: HookType
  /** The shared secret or credential named by `secret_env` (or the type's own `*_env` setting). */
  readonly secret: string | undefined
  /** The type's own settings (e.g. auth0's `audience`, `subject`, `secret_base64`). */
  readonly options: Readonly<Record<string, string | number | boolean>>
}

/** The request exactly as received: authentication is computed over these bytes. */
export interface HookRequest {
  readonly method: string
  readonly headers: Headers
  readonly rawBody: Uint8Array
  /** Epoch milliseconds from the injected clock. */
  readonly now: number
}

export type HookAuth = { ok: true } | { ok: false; reason: string }

/** What one request asks otpd to deliver. */
export interface HookMessage {
  readonly channel: 'sms' | 'email'
  /** E.164 number or email address, as the identity server gave it. */
  readonly recipient: string
  /** The code the identity server generated and will check itself; absent when it sends a whole text. */
  readonly code?: string
  /** A whole text to deliver as given (auth0, authentik, keycloak). */
  readonly text?: string
  readonly subject?: string
  /** A link the email carries beside the code (Supabase's confirmation link). */
  readonly link?: string
  /** The user's language as the payload gives it (BCP 47), when it does. */
  readonly locale?: string
  /** The identity server's own id for this delivery, used to drop its retries. */
  readonly deliveryId?: string
}

export type HookParse = { ok: true; message: HookMessage } | { ok: false; reason: string }

/** Why otpd did not deliver; each adapter maps these to its server's error convention. */
export type HookRefusalKind = 'unauthenticated' | 'invalid' | 'rate_limited' | 'no_credits' | 'blocked' | 'recipient_rejected' | 'unavailable'

export interface HookRefusal {
  readonly kind: HookRefusalKind
  /** The documented message for the user or the operator; never the recipient in clear. */
  readonly message: string
  /** Seconds, for `rate_limited` and `unavailable`. */
  readonly retryAfter?: number
}

export interface HookReply {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body: string
}

export interface HookAdapter {
  readonly type: HookType
  /** The type's own keys of its `[hooks.NAME]` table, beside the shared ones (check.ts); none when absent. */
  readonly optionKeys?: readonly string[]
  /**
   * Problems of its table for `otpd config check` and `serve`, each naming its
   * key (`hooks.NAME.audience ...`); `table` is the whole `[hooks.NAME]`
   * table. Absent: `secret_env` is required. A `secret_env` whose variable is
   * unset or empty is reported by check.ts.
   */
  check?(settings: HookSettings, table: Readonly<Record<string, unknown>>): string[]
  authenticate(request: HookRequest, settings: HookSettings): HookAuth
  parse(request: HookRequest, settings: HookSettings): HookParse
  /** The answer once the message is accepted for delivery (or was already, for a retry). */
  accepted(verificationId: string): HookReply
  refused(refusal: HookRefusal): HookReply
}
