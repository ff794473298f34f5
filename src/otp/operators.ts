/**
 * Console operators and their sessions (docs/console.md#security-model).
 * - Passwords are hashed with argon2id (Bun.password); a generated one is 24
 *   base62 characters (about 143 bits), shown once.
 * - A session is a random token (about 256 bits) in a cookie; the database keeps
 *   only its HMAC, so a copy of it opens no session. Its CSRF token is another
 *   HMAC of it, which cannot be made without the server secret.
 * - A session ends after SESSION_IDLE_MS idle, SESSION_MAX_MS after sign-in,
 *   at sign-out, and with its operator's disabling or password reset: those
 *   move the operator's credential generation on, and a session keeps the
 *   generation its password was checked under, so even a sign-in that checked
 *   the old password just before the change opens nothing after it.
 * - Failed sign-ins are limited per (address, name) and, more slowly, per name
 *   from anywhere, in rolling windows in the database; an attempt is recorded
 *   before the password is checked and forgotten once it succeeds, so
 *   concurrent guesses count too. No address's failures lock out another name.
 */
import type { Clock } from '../lib/clock.ts'
import { randomBase62 } from '../lib/random.ts'
import type { Hasher } from '../lib/secrets.ts'
import { type Actor, audit } from './audit.ts'
import { OperatorError } from './operator-error.ts'
import type { OperatorRole, OperatorRow, Repos, Storage } from './ports/index.ts'

export const SESSION_IDLE_MS = 12 * 3_600_000
/** A session's absolute lifetime, however often it is used. */
export const SESSION_MAX_MS = 24 * 3_600_000
/** A session's last-seen time is written at most this often (so its idle expiry is exact to within this). */
export const SESSION_TOUCH_MS = 60_000
export const SIGN_IN_WINDOW_MS = 15 * 60_000
/** Failures of one name from one client address in SIGN_IN_WINDOW_MS (an unknown address counts as one). */
export const MAX_FAILED_PER_OPERATOR = 5
/** The slower guard: failures of one name from every address together in SIGN_IN_GUARD_WINDOW_MS. */
export const MAX_FAILED_PER_OPERATOR_ANYWHERE = 50
export const SIGN_IN_GUARD_WINDOW_MS = 60 * 60_000
/**
 * The attempt windows kept (console_sign_in_attempts): the longest of the
 * windows counted in it, the recipient searches' (console-search.ts) included.
 */
export const ATTEMPT_WINDOW_MS = SIGN_IN_GUARD_WINDOW_MS
export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'admin']
export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 1024
const TOKEN_LENGTH = 43
const OPERATOR_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/

export interface OperatorView {
  id: number
  name: string
  status: OperatorRow['status']
  createdAt: number
  passwordChangedAt: number
  role: OperatorRole
}

/** A signed-in operator, as a request sees it. */
export interface ConsoleSession {
  operator: string
  operatorId: number
  role: OperatorRole
  /** What every state-changing request must carry (X-CSRF-Token or `_csrf`). */
  csrf: string
}

export type SignInOutcome =
  | { ok: true; token: string; session: ConsoleSession }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfter: number; scope: 'address' | 'operator' }

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new OperatorError(`the password must be at least ${MIN_PASSWORD_LENGTH} characters long`)
  if (password.length > MAX_PASSWORD_LENGTH) throw new OperatorError(`the password must be at most ${MAX_PASSWORD_LENGTH} characters long`)
}

export function checkRole(role: string): OperatorRole {
  if (!(OPERATOR_ROLES as readonly string[]).includes(role)) throw new OperatorError(`role must be one of ${OPERATOR_ROLES.join(', ')}, got '${role}'`)
  return role as OperatorRole
}

const view = (o: OperatorRow): OperatorView => ({
  id: o.id,
  name: o.name,
  status: o.status,
  createdAt: o.createdAt,
  passwordChangedAt: o.passwordChangedAt,
  role: o.role,
})
const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: 'argon2id' })

/**
 * Verified when the operator is unknown or disabled, so that a sign-in takes
 * as long whether or not the name exists. Made on first use.
 */
let decoy: Promise<string> | undefined

export class Operators {
  constructor(
    private readonly storage: Storage,
    private readonly hasher: Hasher,
    private readonly clock: Clock,
    private readonly actor?: Actor,
  ) {}

  /** The same use cases, each change written to the audit log as `actor`'s (otp/audit.ts). */
  as(actor: Actor): Operators {
    return new Operators(this.storage, this.hasher, this.clock, actor)
  }

  /** Adds an operator; without `password`, one is generated and returned (the only time it exists in clear). */
  async add(name: string, password?: string, role: OperatorRole = 'admin'): Promise<{ operator: OperatorView; password?: string }> {
    checkRole(role)
    if (!OPERATOR_NAME.test(name)) {
      throw new OperatorError(`operator name '${name}' is not valid: use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit`)
    }
    const generated = password === undefined ? randomBase62(24) : undefined
    const secret = password ?? generated!
    checkPassword(secret)
    // Hashed once, outside the transaction: a transaction run again keeps the same hash.
    const passwordHash = await hashPassword(secret)
    const operator = await this.storage.write(async (r) => {
      if (await r.operators.findOperator(name)) throw new OperatorError(`operator '${name}' already exists`, 'conflict')
      const at = this.clock.now()
      const o = await r.operators.insertOperator({ name, passwordHash, role, at })
      await audit(r, this.actor, at, 'operator.added', `operator ${name}`, { password: generated === undefined ? 'given' : 'generated', role })
      return o
    })
    return { operator: view(operator), ...(generated === undefined ? {} : { password: generated }) }
  }

  async list(): Promise<OperatorView[]> {
    return (await this.storage.read((r) => r.operators.listOperators())).map(view)
  }

  /** Refuses sign-in from now on and ends every session of the operator. */
  async disable(name: string): Promise<{ operator: OperatorView; sessionsEnded: number }> {
    return this.storage.write(async (r) => {
      const o = await operatorIn(r, name)
      await r.operators.setOperatorStatus(o.id, 'disabled')
      const sessionsEnded = await r.operators.deleteSessionsOf(o.id)
      await audit(r, this.actor, this.clock.now(), 'operator.disabled', `operator ${o.name}`, { from: o.status, sessions_ended: sessionsEnded })
      return { operator: view({ ...o, status: 'disabled' }), sessionsEnded }
    })
  }

  /** A new role; the operator's sessions take it at their next request. */
  async setRole(name: string, role: string): Promise<OperatorView> {
    const to = checkRole(role)
    return this.storage.write(async (r) => {
      const o = await operatorIn(r, name)
      await r.operators.setOperatorRole(o.id, to)
      await audit(r, this.actor, this.clock.now(), 'operator.role_changed', `operator ${o.name}`, { from: o.role, to })
      return view({ ...o, role: to })
    })
  }

  async enable(name: string): Promise<OperatorView> {
    return this.storage.write(async (r) => {
      const o = await operatorIn(r, name)
      await r.operators.setOperatorStatus(o.id, 'active')
      await audit(r, this.actor, this.clock.now(), 'operator.enabled', `operator ${o.name}`, { from: o.status })
      return view({ ...o, status: 'active' })
    })
  }

  /** A new password (generated unless given) and every session of the operator ended. */
  async resetPassword(name: string, password?: string): Promise<{ operator: OperatorView; password?: string; sessionsEnded: number }> {
    const generated = password === undefined ? randomBase62(24) : undefined
    const secret = password ?? generated!
    checkPassword(secret)
    const passwordHash = await hashPassword(secret)
    return this.storage.write(async (r) => {
      const o = await operatorIn(r, name)
      const at = this.clock.now()
      await r.operators.setPassword(o.id, passwordHash, at)
      const sessionsEnded = await r.operators.deleteSessionsOf(o.id)
      await audit(r, this.actor, at, 'operator.password_reset', `operator ${o.name}`, {
        password: generated === undefined ? 'given' : 'generated',
        sessions_ended: sessionsEnded,
      })
      return { operator: view({ ...o, passwordHash, passwordChangedAt: at }), sessionsEnded, ...(generated === undefined ? {} : { password: generated }) }
    })
  }

  /**
   * Signs in: refused while the (address, name) pair or the name from
   * anywhere has had too many attempts in its window (the password is not
   * even checked then), else a new session when the password is the
   * operator's and it is active. `address` is null when the client's address
   * is unknown (then all unknown addresses count as one).
   */
  async signIn(name: string, password: string, address: string | null): Promise<SignInOutcome> {
    const gate = await this.admitSignIn(name, address)
    if (gate.limited) return { ok: false, reason: 'limited', retryAfter: gate.retryAfter, scope: gate.scope }
    const o = OPERATOR_NAME.test(name) ? await this.storage.read((r) => r.operators.findOperator(name)) : undefined
    const valid = password.length <= MAX_PASSWORD_LENGTH && (await Bun.password.verify(password, o?.passwordHash ?? (await decoyHash())))
    if (!valid || o === undefined || o.status !== 'active') return { ok: false, reason: 'invalid' }
    const token = randomBase62(TOKEN_LENGTH)
    const made = await this.storage.write(async (r) => {
      // Read again: a reset or disable since the password was checked refuses the session here, and one
      // that commits after this insert ends it through the generation it keeps (session()).
      const now = await r.operators.findOperator(o.name)
      if (now === undefined || now.status !== 'active' || now.credentialGeneration !== o.credentialGeneration) return false
      for (const id of gate.ids) await r.operators.forgetAttempt(id)
      const at = this.clock.now()
      await r.operators.deleteIdleSessions(at - SESSION_IDLE_MS, at - SESSION_MAX_MS)
      await r.operators.insertSession({ tokenHash: this.tokenHash(token), operatorId: o.id, generation: o.credentialGeneration, at })
      return true
    })
    if (!made) return { ok: false, reason: 'invalid' }
    return { ok: true, token, session: { operator: o.name, operatorId: o.id, role: o.role, csrf: this.csrfOf(token) } }
  }

  /** The attempt recorded in each window of the sign-in limit, or the window that is full. */
  private admitSignIn(
    name: string,
    address: string | null,
  ): Promise<{ limited: true; retryAfter: number; scope: 'address' | 'operator' } | { limited: false; ids: number[] }> {
    const lower = name.toLowerCase()
    const scopes = [
      {
        scope: this.hasher.digest('console-sign-in', `pair:${address ?? 'unknown'} ${lower}`),
        max: MAX_FAILED_PER_OPERATOR,
        windowMs: SIGN_IN_WINDOW_MS,
        kind: 'address' as const,
      },
      {
        scope: this.hasher.digest('console-sign-in', `operator:${lower}`),
        max: MAX_FAILED_PER_OPERATOR_ANYWHERE,
        windowMs: SIGN_IN_GUARD_WINDOW_MS,
        kind: 'operator' as const,
      },
    ]
    const now = this.clock.now()
    return this.storage.write(async (r) => {
      for (const s of scopes) {
        const retryAfter = await windowFull(r, s.scope, s.max, s.windowMs, now)
        if (retryAfter !== null) return { limited: true as const, retryAfter, scope: s.kind }
      }
      await r.operators.deleteAttemptsBefore(now - ATTEMPT_WINDOW_MS)
      const ids: number[] = []
      for (const s of scopes) ids.push(await r.operators.recordAttempt(s.scope, now))
      return { limited: false as const, ids }
    })
  }

  /** The session a cookie's token opens, if it is alive; its last-seen time moves on (at most once a minute). */
  async session(token: string): Promise<ConsoleSession | undefined> {
    if (!isToken(token)) return undefined
    const tokenHash = this.tokenHash(token)
    const s = await this.storage.read((r) => r.operators.findSession(tokenHash))
    const now = this.clock.now()
    if (s === undefined || s.operatorStatus !== 'active' || s.sessionGeneration !== s.operatorGeneration) return undefined
    if (now - s.lastSeenAt >= SESSION_IDLE_MS || now - s.createdAt >= SESSION_MAX_MS) return undefined
    if (now - s.lastSeenAt >= SESSION_TOUCH_MS) await this.storage.write((r) => r.operators.touchSession(tokenHash, now))
    return { operator: s.operator, operatorId: s.operatorId, role: s.operatorRole, csrf: this.csrfOf(token) }
  }

  async signOut(token: string): Promise<void> {
    if (!isToken(token)) return
    const tokenHash = this.tokenHash(token)
    await this.storage.write((r) => r.operators.deleteSession(tokenHash))
  }

  private tokenHash(token: string): Uint8Array {
    return this.hasher.digest('console-session', token)
  }

  private csrfOf(token: string): string {
    return this.hasher.hash('console-csrf', token)
  }
}

/**
 * Seconds until the scope's window has room again, or null when it has room
 * now. Inside a write the scope is held until the commit (ports/operators.ts).
 */
export async function windowFull(r: Repos, scope: Uint8Array, max: number, windowMs: number, now: number): Promise<number | null> {
  const oldest = await r.operators.nthAttempt(scope, max)
  if (oldest === undefined || oldest <= now - windowMs) return null
  return Math.max(1, Math.ceil((oldest + windowMs - now) / 1000))
}

function isToken(token: string): boolean {
  return token.length === TOKEN_LENGTH && /^[0-9A-Za-z]+$/.test(token)
}

function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBase62(24))
  return decoy
}

async function operatorIn(r: Repos, name: string): Promise<OperatorRow> {
  const o = await r.operators.findOperator(name)
  if (!o) throw new OperatorError(`operator '${name}' does not exist (see: otpd operators list)`, 'not_found')
  return o
}
