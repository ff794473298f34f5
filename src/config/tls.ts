/**
 * `[server.tls]`: both PEM files or neither, each readable and of the right
 * kind, and the key the certificate's own. Checked with the rest of the
 * config, so `otpd config check` says what is wrong instead of the TLS
 * library failing at start with a cryptic error.
 */
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'

export interface TlsFiles {
  cert?: string
  key?: string
}

export interface TlsPem {
  cert: string
  key: string
}

function read(setting: string, path: string, problems: string[]): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    problems.push(`${setting} cannot be read: ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`)
    return null
  }
}

export function checkTls(tls: TlsFiles | undefined): string[] {
  if (!tls) return []
  if (tls.cert === undefined || tls.key === undefined) {
    const given = tls.cert !== undefined ? 'server.tls.cert' : tls.key !== undefined ? 'server.tls.key' : null
    return [`server.tls.cert and server.tls.key must be set together${given ? ` (only ${given} is set)` : ''}`]
  }
  const problems: string[] = []
  const certPem = read('server.tls.cert', tls.cert, problems)
  const keyPem = read('server.tls.key', tls.key, problems)
  let cert: X509Certificate | null = null
  let key: KeyObject | null = null
  if (certPem !== null) {
    try {
      cert = new X509Certificate(certPem)
    } catch {
      problems.push(`server.tls.cert is not a PEM certificate: ${tls.cert}`)
    }
  }
  if (keyPem !== null) {
    try {
      key = createPrivateKey(keyPem)
    } catch {
      problems.push(`server.tls.key is not an unencrypted PEM private key: ${tls.key}`)
    }
  }
  if (cert && key && !cert.checkPrivateKey(key)) problems.push(`server.tls.key does not belong to the certificate in server.tls.cert`)
  return problems
}

/** The PEM texts for Bun.serve; null when TLS is off. Assumes checkTls found nothing. */
export function readTls(tls: TlsFiles | undefined): TlsPem | null {
  if (!tls?.cert || !tls.key) return null
  return { cert: readFileSync(tls.cert, 'utf8'), key: readFileSync(tls.key, 'utf8') }
}

/**
 * What the PEM files hold now, as a digest: a reload compares it with the
 * running one, so a renewed certificate (same paths, new content) is named as
 * waiting for a restart too. Unreadable files digest as their error.
 */
export function tlsFingerprint(tls: TlsFiles | undefined): string {
  if (!tls?.cert || !tls.key) return ''
  const h = createHash('sha256')
  for (const path of [tls.cert, tls.key]) {
    try {
      h.update(readFileSync(path))
    } catch (err) {
      h.update(String((err as NodeJS.ErrnoException).code ?? err))
    }
  }
  return h.digest('hex')
}
