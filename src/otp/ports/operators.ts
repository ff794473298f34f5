/**
 * Console operators, their sessions and the failed sign-in windows
 * (docs/console.md#security-model). Tokens and scopes arrive already hashed
 * (HMAC with the server secret): nothing here is a secret in clear.
 */

export type OperatorStatus = 'active' | 'disabled'
/** `viewer` reads only; `admin` may change (docs/console.md#roles). */
export type OperatorRole = 'viewer' | 'admin'

export interface OperatorRow {
  id: number
  name: string
  /** argon2id, in the PHC string format Bun.password writes. */
  passwordHash: string
  status: OperatorStatus
  createdAt: number
  passwordChangedAt: number
  role: OperatorRole
  /** Moves on at every password reset and disable; a session made under another is dead. */
  credentialGeneration: number
}

/** A session as a request finds it: with its operator, whatever the operator's status. */
export interface SessionRow {
  operatorId: number
  operator: string
  operatorStatus: OperatorStatus
  operatorRole: OperatorRole
  /** The operator's generation now, and the one its password was checked under for this session. */
  operatorGeneration: number
  sessionGeneration: number
  createdAt: number
  lastSeenAt: number
}

export interface OperatorRepo {
  insertOperator(o: { name: string; passwordHash: string; role: OperatorRole; at: number }): Promise<OperatorRow>
  findOperator(name: string): Promise<OperatorRow | undefined>
  listOperators(): Promise<OperatorRow[]>
  /** A new status; a disable also moves the credential generation on. */
  setOperatorStatus(id: number, status: OperatorStatus): Promise<void>
  /** A new password; the credential generation moves on. */
  setPassword(id: number, passwordHash: string, at: number): Promise<void>
  setOperatorRole(id: number, role: OperatorRole): Promise<void>

  insertSession(s: { tokenHash: Uint8Array; operatorId: number; generation: number; at: number }): Promise<void>
  findSession(tokenHash: Uint8Array): Promise<SessionRow | undefined>
  touchSession(tokenHash: Uint8Array, at: number): Promise<void>
  deleteSession(tokenHash: Uint8Array): Promise<void>
  /** Every session of the operator (disabled, or its password reset); returns how many. */
  deleteSessionsOf(operatorId: number): Promise<number>
  /** Sessions last seen before `seenBefore` (idle past their expiry) or made before `createdBefore` (past their lifetime). */
  deleteIdleSessions(seenBefore: number, createdBefore: number): Promise<number>

  /**
   * Time of the scope's n-th most recent sign-in attempt (1 = the newest), if
   * it has that many. Inside a write, the scope is held until the commit
   * (PostgreSQL: an advisory lock), so the read and the attempt recorded
   * after it are exact across nodes.
   */
  nthAttempt(scope: Uint8Array, n: number): Promise<number | undefined>
  /** Records an attempt; returns its id, to forget it if the sign-in succeeds. */
  recordAttempt(scope: Uint8Array, at: number): Promise<number>
  forgetAttempt(id: number): Promise<void>
  /** Attempts older than `before` (out of every window). */
  deleteAttemptsBefore(before: number): Promise<void>
}
