/**
 * The HTML answers of the console's sign-in: the page (rendered by
 * console/ui/layout.tsx, which escapes every value; no inline script or
 * style, console/http.ts CONTENT_SECURITY_POLICY), and where a sign-in may
 * go on to.
 */
import { CONSOLE_PATH, SIGN_IN_PATH, withSecurityHeaders } from './http.ts'
import { signInPage as renderSignIn } from './ui/layout.tsx'

export function htmlResponse(html: string, status = 200, headers: Record<string, string> = {}): Response {
  return withSecurityHeaders(new Response(html, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } }))
}

/** Where a sign-in goes on to: a console page of this server, never another site (`//host`, `/\host`). */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith(`${CONSOLE_PATH}/`) || next.startsWith(SIGN_IN_PATH)) return `${CONSOLE_PATH}/`
  return /^\/console\/[^/\\]/.test(next) || next === `${CONSOLE_PATH}/` ? next : `${CONSOLE_PATH}/`
}

/** The sign-in page (console/ui/layout.tsx), going on to `next` once signed in. */
export function signInPage(opts: { error?: string; next?: string; name?: string } = {}): string {
  return renderSignIn({ ...opts, next: safeNext(opts.next) })
}
