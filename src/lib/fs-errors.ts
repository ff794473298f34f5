/**
 * File errors as operators read them: the absolute path, the reason in words
 * and what otpd needs, in the form of the read-only-database message
 * (store/sqlite/start-checks.ts), instead of `EACCES: permission denied, open 'x'`.
 */
import { userInfo } from 'node:os'
import { resolve } from 'node:path'

/** Errors the operator fixes with ownership or modes (or a writable mount), not by editing the config. */
const ACCESS_CODES = new Set(['EACCES', 'EPERM', 'EROFS'])

export function isAccessError(err: unknown): boolean {
  return ACCESS_CODES.has((err as NodeJS.ErrnoException | undefined)?.code ?? '')
}

/** "EACCES: permission denied, open '/x'" -> "permission denied"; else the code, else the message. */
export function fsReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  return /^[A-Z]+: ([^,]+)/.exec(e?.message ?? '')?.[1] ?? e?.code ?? String(err)
}

/**
 * `<what> <absolute path> (<reason>): otpd needs <need>`; the user named is
 * the one this process runs as, since that is who lacked the access.
 */
export function accessMessage(what: string, path: string, err: unknown, need: string): string {
  return `cannot ${what} ${resolve(path)} (${fsReason(err)}): otpd, running as ${userName()}, needs ${need} (the installed service runs as otpd: sudo -u otpd otpd …)`
}

function userName(): string {
  try {
    const u = userInfo()
    return u.username && u.username !== 'unknown' ? u.username : `uid ${u.uid}`
  } catch {
    return `uid ${process.getuid?.() ?? '?'}` // a uid with no passwd entry (a container)
  }
}
