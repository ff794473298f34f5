/**
 * Console operators, sessions, sign-in attempts and the audit log
 * (otp/ports/ operators and audit): the shared statements of store/sql/,
 * prepared once per connection. SQLite has one writer at a time, so a
 * scope's attempt window read inside a write is exact without a lock.
 */
import type { AuditEntry, AuditLog, AuditQuery, AuditRow, OperatorRepo, OperatorRole, OperatorRow, OperatorStatus, SessionRow } from '../../otp/ports/index.ts'
import { AUDIT_SQL, auditListParams, toAuditRow } from '../sql/audit.ts'
import { OPERATOR_SQL, toOperator, toSession } from '../sql/operators.ts'
import { num, numOrNull } from '../sql/values.ts'
import type { Db } from './db.ts'
import { type Prepared, prepareShared } from './shared-sql.ts'

export class SqliteOperatorRepo implements OperatorRepo {
  private readonly q: Record<keyof typeof OPERATOR_SQL, Prepared>
  constructor(db: Db) {
    this.q = prepareShared(db.$client, OPERATOR_SQL)
  }
  async insertOperator(o: { name: string; passwordHash: string; role: OperatorRole; at: number }): Promise<OperatorRow> {
    return toOperator(this.q.insertOperator.get(o.name, o.passwordHash, o.at, o.role)!)
  }
  async findOperator(name: string): Promise<OperatorRow | undefined> {
    const row = this.q.findOperator.get(name)
    return row === null ? undefined : toOperator(row)
  }
  async listOperators(): Promise<OperatorRow[]> {
    return this.q.listOperators.all(0).map(toOperator)
  }
  async setOperatorStatus(id: number, status: OperatorStatus): Promise<void> {
    this.q.setOperatorStatus.run(id, status)
  }
  async setPassword(id: number, passwordHash: string, at: number): Promise<void> {
    this.q.setPassword.run(id, passwordHash, at)
  }
  async setOperatorRole(id: number, role: OperatorRole): Promise<void> {
    this.q.setOperatorRole.run(id, role)
  }
  async insertSession(s: { tokenHash: Uint8Array; operatorId: number; generation: number; at: number }): Promise<void> {
    this.q.insertSession.run(s.tokenHash, s.operatorId, s.generation, s.at)
  }
  async findSession(tokenHash: Uint8Array): Promise<SessionRow | undefined> {
    const row = this.q.findSession.get(tokenHash)
    return row === null ? undefined : toSession(row)
  }
  async touchSession(tokenHash: Uint8Array, at: number): Promise<void> {
    this.q.touchSession.run(tokenHash, at)
  }
  async deleteSession(tokenHash: Uint8Array): Promise<void> {
    this.q.deleteSession.run(tokenHash)
  }
  async deleteSessionsOf(operatorId: number): Promise<number> {
    return this.q.deleteSessionsOf.run(operatorId).changes
  }
  async deleteIdleSessions(seenBefore: number, createdBefore: number): Promise<number> {
    return this.q.deleteIdleSessions.run(seenBefore, createdBefore).changes
  }
  async nthAttempt(scope: Uint8Array, n: number): Promise<number | undefined> {
    return numOrNull(this.q.nthAttempt.get(scope, n - 1)?.at) ?? undefined
  }
  async recordAttempt(scope: Uint8Array, at: number): Promise<number> {
    return num(this.q.recordAttempt.get(scope, at)!.seq)
  }
  async forgetAttempt(id: number): Promise<void> {
    this.q.forgetAttempt.run(id)
  }
  async deleteAttemptsBefore(before: number): Promise<void> {
    this.q.deleteAttemptsBefore.run(before)
  }
}

export class SqliteAuditLog implements AuditLog {
  private readonly q: Record<keyof typeof AUDIT_SQL, Prepared>
  constructor(db: Db) {
    this.q = prepareShared(db.$client, AUDIT_SQL)
  }
  async append(e: AuditEntry): Promise<void> {
    this.q.append.run(e.at, e.operator, e.source, e.action, e.subject, JSON.stringify(e.details))
  }
  async list(q: AuditQuery): Promise<AuditRow[]> {
    return this.q.list.all(...auditListParams(q)).map(toAuditRow)
  }
}
