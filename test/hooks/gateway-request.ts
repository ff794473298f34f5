/**
 * Builds the `HookRequest` an adapter sees, from the exact bytes and headers
 * an identity server sends, and the settings of one `[hooks.NAME]` table.
 */
import type { HookRequest, HookSettings, HookType } from '../../src/hooks/adapter.ts'

export const HOOK_NOW = Date.UTC(2026, 0, 1, 12, 0, 0)

export function hookRequest(body: string | Uint8Array, headers: Record<string, string> = {}, now = HOOK_NOW): HookRequest {
  return {
    method: 'POST',
    headers: new Headers(headers),
    rawBody: typeof body === 'string' ? new TextEncoder().encode(body) : body,
    now,
  }
}

export function hookSettings(type: HookType, secret: string | undefined, options: HookSettings['options'] = {}): HookSettings {
  return { name: `${type}-test`, type, secret, options }
}

export const basicAuth = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
