/**
 * Every message string the HTTP API returns, in one place (the domain returns
 * outcomes; send-route.ts and verify-route.ts turn them into these). The texts are part of the
 * contract (docs/api.md#errors): change none without changing the contract.
 */
export const Msg = {
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  keyRequired: 'API key is required. Provide it via Authorization: Bearer <token> or x-api-key header',
  keyInvalid: 'Invalid API key',
  keyDisabled: 'API key is disabled',
  bodyTooLarge: 'Request body too large',
  contentType: 'Content-Type must be application/json',
  invalidJson: 'Request body must be valid JSON',
  notObject: 'Request body must be a JSON object',
  channel: 'channel is required and must be one of: sms, email, voice, whatsapp',
  recipientPhone: 'recipient must be a valid E.164 phone number for SMS and voice channels',
  recipientEmail: 'recipient must be a valid email address for the email channel',
  message: 'message must be a string of 1-1600 characters',
  messagePlaceholder: 'message must contain the {code} placeholder',
  subject: 'subject must be a single line of 1-200 characters',
  expiresIn: 'expires_in must be an integer between 60 and 3600',
  code: 'code must be a numeric string between 4-10 digits',
  codeRequired: 'code is required',
  verificationIdRequired: 'verification_id is required',
  customTextRefused: 'This account does not accept a custom message or subject: send without them and the configured texts are used',
  insufficientCredits: 'Insufficient credits. Please purchase more credits.',
  verificationNotFound: 'Verification not found',
  sendFailed: 'Failed to send verification',
  internal: 'Internal server error',
  verified: 'Code verified successfully',
  invalidCode: 'Invalid code',
  expired: 'Code expired',
  alreadyUsed: 'Code already used',
  metricsTokenRequired: 'Metrics token is required. Provide it via Authorization: Bearer <token>',
  metricsTokenInvalid: 'Invalid metrics token',
  idempotencyKey: 'Idempotency-Key must be 1-255 visible ASCII characters',
  idempotencyConflict: 'Idempotency-Key was already used with a different request',
  idempotencyInProgress: 'A request with this Idempotency-Key is still in progress',
  ip: 'ip must be a valid IPv4 or IPv6 address',
  /** docs/messages.md#how-a-text-is-chosen */
  locale: 'locale must be a supported language tag',
  /** docs/messages.md#autofill */
  appHash: 'app_hash must be 11 characters of base64',
  /** docs/api.md#workflows */
  channelAndWorkflow: 'channel and workflow cannot both be given',
  workflow: 'workflow must be a list of 1 to 3 steps',
  channelTimeout: 'channel_timeout must be an integer between 15 and 900',
  channelTimeoutAlone: 'channel_timeout is allowed only with workflow',
  /** `channel: "auto"` for a number whose country no `[[routing]]` table gives a workflow (docs/api.md#workflows). */
  autoUnrouted: "channel auto has no workflow for this recipient's country",
  /** `/next` with no later step to start (or a send without a workflow). */
  noNextStep: 'Verification has no next step',
  /** The node's ceiling on sends in flight is reached (docs/api.md#overload): nothing was charged or counted. */
  overloaded: 'Too many sends in progress. Please try again in 1 second.',
  /** The event outbox holds `[events] max_queued` deliveries (docs/api.md#overload): nothing was charged, counted or stored. */
  eventsQueued: 'Too many webhook events waiting for delivery. Please try again in 5 seconds.',
  /** A delivery receipt whose vendor signature is missing or wrong (docs/api.md#delivery-receipts). */
  invalidSignature: 'Invalid signature',
  /** A hook request whose signature or credential is missing, wrong, expired or replayed (docs/integrations.md#safe-by-default). */
  hookUnauthenticated: 'Hook request not authenticated',
  /** docs/integrations.md#what-the-identity-server-sends */
  hookPayload: 'Hook payload not understood',
  hookRecipient: 'Hook recipient is not a valid phone number or email address',
  hookCode: 'Hook code must be 1-32 letters or digits',
  hookText: 'Hook text must be 1-1600 characters',
  /** The hook's `account` names no account (docs/integrations.md#troubleshooting). */
  hookAccountMissing: 'Hook is not available',
  /** An operator disabled or revoked the hook's key (docs/integrations.md#how-a-hook-is-billed). */
  hookDisabled: 'Hook is disabled',
} as const

/** A workflow step whose `channel` is missing or unknown (docs/api.md#workflows); `n` counts from 1. */
export function workflowChannelMessage(n: number): string {
  return `workflow step ${n}: channel must be one of: sms, email, voice, whatsapp`
}

/** A workflow step whose recipient (its own, or the send's) does not fit its channel. */
export function workflowRecipientMessage(n: number, channel: string): string {
  return channel === 'email'
    ? `workflow step ${n}: recipient must be a valid email address for the email channel`
    : `workflow step ${n}: recipient must be a valid E.164 phone number for SMS, voice and WhatsApp`
}

/** A workflow step with the channel and recipient of an earlier one. */
export function workflowRepeatMessage(n: number, earlier: number): string {
  return `workflow step ${n} repeats step ${earlier}`
}

/** Cancel of a verification that ended otherwise (docs/api.md#verification-status). */
export function alreadyEndedMessage(status: string): string {
  return `Verification is already ${status}`
}

export function keyRateLimitMessage(max: number, seconds: number): string {
  return `Rate limit exceeded: Maximum ${max} requests per minute. Please try again in ${seconds} seconds.`
}

export function recipientRateLimitMessage(max: number, period: string, seconds: number): string {
  return `Rate limit exceeded: Maximum ${max} verification codes per ${period}. Please try again in ${seconds} seconds.`
}

/** Send to a recipient while its failure cap holds (docs/api.md#hardening). */
export function recipientFailureCapMessage(seconds: number): string {
  return `Rate limit exceeded: too many failed attempts for this recipient. Please try again in ${seconds} seconds.`
}

/** Fraud guard rule 1 (docs/api.md#fraud-guard). */
export function countryNotAllowedMessage(country: string): string {
  return `Sending to this destination country is not allowed: ${country}`
}

/** Fraud guard rule 2. */
export function ipRateLimitMessage(max: number, seconds: number): string {
  return `Rate limit exceeded: Maximum ${max} verification codes per hour for this IP address. Please try again in ${seconds} seconds.`
}

/** Fraud guard rules 3 and 4. */
export function pumpingBlockedMessage(seconds: number): string {
  return `Sending to this destination is temporarily blocked (suspected SMS pumping). Please try again in ${seconds} seconds.`
}

/** Fraud guard rule 5. */
export function dailyCreditLimitMessage(max: number, seconds: number): string {
  return `Daily credit limit of ${max} reached for this account. Please try again in ${seconds} seconds.`
}

/** `[messages] sms_max_segments` (docs/messages.md#encoding-and-segments). */
export function smsTooLongMessage(max: number): string {
  return `message is longer than ${max} SMS segments`
}

/** The admin listener's `Host` check (docs/configuration.md#server). */
export function hostNotAllowedMessage(name: string): string {
  return `Host '${name}' is not a name of this admin listener: add it to server.admin_allowed_hosts`
}

/** `[messages] voice_max_characters` (docs/messages.md#voice). */
export function voiceTooLongMessage(max: number): string {
  return `message is longer than ${max} characters for a voice call`
}

/** The lockout text (docs/api.md#lockout); the duration follows `limits.lockout_seconds`. */
export function lockoutMessage(lockoutSeconds: number): string {
  const minutes = Math.ceil(lockoutSeconds / 60)
  return `Too many failed attempts. Please try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'} or request a new code.`
}

/** /readyz when a check fails: names the failing checks (details go to the server log). */
export function notReadyMessage(failing: string[]): string {
  return `Not ready: ${failing.join(', ')}`
}
