/**
 * Each hook type's adapter (adapter.ts), by type: a plain table, one line per
 * type. A type configured but missing here is refused by `otpd config check`
 * (check.ts).
 */
import type { HookAdapter, HookType } from './adapter.ts'
import { auth0Hook } from './auth0.ts'
import { authentikHook } from './authentik.ts'
import { keycloakHook } from './keycloak.ts'
import { kratosHook } from './kratos.ts'
import { logtoHook } from './logto.ts'
import { supabaseHook } from './supabase.ts'
import { zitadelHook } from './zitadel.ts'

export const HOOK_ADAPTERS: Partial<Record<HookType, HookAdapter>> = {
  supabase: supabaseHook,
  zitadel: zitadelHook,
  logto: logtoHook,
  auth0: auth0Hook,
  authentik: authentikHook,
  keycloak: keycloakHook,
  kratos: kratosHook,
}
