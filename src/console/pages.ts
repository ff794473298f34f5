/**
 * The console's plain HTML pages that need no script: the sign-in page and a
 * first home page (the console's pages proper are served beside them).
 * Every value put in the HTML is escaped; there is no inline script or style
 * (console/http.ts CONTENT_SECURITY_POLICY).
 */
import { CONSOLE_PATH, CSRF_FIELD, SIGN_IN_PATH, withSecurityHeaders } from './http.ts'

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · otpd console</title>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

export function htmlResponse(html: string, status = 200, headers: Record<string, string> = {}): Response {
  return withSecurityHeaders(new Response(html, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } }))
}

/** Where a sign-in goes on to: a console page of this server, never another site (`//host`, `/\host`). */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith(`${CONSOLE_PATH}/`) || next.startsWith(SIGN_IN_PATH)) return `${CONSOLE_PATH}/`
  return /^\/console\/[^/\\]/.test(next) || next === `${CONSOLE_PATH}/` ? next : `${CONSOLE_PATH}/`
}

export function signInPage(opts: { error?: string; next?: string; name?: string } = {}): string {
  const error = opts.error === undefined ? '' : `<p role="alert">${escapeHtml(opts.error)}</p>\n`
  return page(
    'Sign in',
    `<h1>otpd console</h1>
${error}<form method="post" action="${SIGN_IN_PATH}">
<input type="hidden" name="next" value="${escapeHtml(safeNext(opts.next))}">
<p><label for="name">Operator</label><br><input id="name" name="name" autocomplete="username" required maxlength="64" value="${escapeHtml(opts.name ?? '')}"></p>
<p><label for="password">Password</label><br><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"></p>
<p><button type="submit">Sign in</button></p>
</form>`,
  )
}

export function homePage(operator: string, csrf: string): string {
  return page(
    'Console',
    `<h1>otpd console</h1>
<p>Signed in as ${escapeHtml(operator)}.</p>
<form method="post" action="${CONSOLE_PATH}/sign-out">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrf)}">
<button type="submit">Sign out</button>
</form>`,
  )
}
