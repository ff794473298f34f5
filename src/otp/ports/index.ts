/**
 * The domain's ports: every contract the engines (store/) and providers
 * (delivery/) implement. A leaf: these files import no service, so no import
 * circle can form through them.
 */

export type * from './admin.ts'
export type * from './audit.ts'
export type * from './credits.ts'
export type * from './delivery.ts'
export type * from './events.ts'
export type * from './fraud.ts'
export type * from './hooks.ts'
export type * from './idempotency.ts'
export type * from './keys.ts'
export type * from './operators.ts'
export type * from './stats.ts'
export type * from './storage.ts'
export type * from './verifications.ts'
export type * from './webhooks.ts'
export type * from './workflows.ts'
