/**
 * Console operators, sessions, sign-in attempts and the audit log
 * (otp/ports/ operators and audit): the shared statements of store/sql/.
 * Inside a write, a scope's attempt window is read and appended to under
 * the scope's advisory lock (store/pg/locks.ts `named`), so concurrent
 * sign-ins on several nodes cannot each see room for one more.
 */
import type { AuditEntry, AuditLog, AuditQuery, AuditRow, OperatorRepo, OperatorRole, OperatorRow, OperatorStatus, SessionRow } from '../../otp/ports/index.ts'
import { AUDIT_SQL, auditListParams, toAuditRow } from '../sql/audit.ts'
import { OPERATOR_SQL, toOperator, toSession } from '../sql/operators.ts'
import { num, numOrNull } from '../sql/values.ts'
import type { Tx } from './client.ts'
import type { TxLocks } from './locks.ts'

const scopeLock = (scope: Uint8Array) => `console-sign-in:${Buffer.from(scope).toString('hex')}`

export class PgOperatorRepo implements OperatorRepo {
  constructor(
    private readonly tx: Tx,
    private readonly locks: TxLocks,
  ) {}
  async insertOperator(o: { name: string; passwordHash: string; role: OperatorRole; at: number }): Promise<OperatorRow> {
    return toOperator((await this.tx.q(OPERATOR_SQL.insertOperator, [o.name, o.passwordHash, o.at, o.role]))[0]!)
  }
  async findOperator(name: string): Promise<OperatorRow | undefined> {
    const rows = await this.tx.q(OPERATOR_SQL.findOperator, [name])
    return rows[0] === undefined ? undefined : toOperator(rows[0])
  }
  async listOperators(): Promise<OperatorRow[]> {
    return (await this.tx.q(OPERATOR_SQL.listOperators, [0])).map(toOperator)
  }
  async setOperatorStatus(id: number, status: OperatorStatus): Promise<void> {
    await this.tx.run(OPERATOR_SQL.setOperatorStatus, [id, status])
  }
  async setPassword(id: number, passwordHash: string, at: number): Promise<void> {
    await this.tx.run(OPERATOR_SQL.setPassword, [id, passwordHash, at])
  }
  async setOperatorRole(id: number, role: OperatorRole): Promise<void> {
    await this.tx.run(OPERATOR_SQL.setOperatorRole, [id, role])
  }
  async insertSession(s: { tokenHash: Uint8Array; operatorId: number; generation: number; at: number }): Promise<void> {
    await this.tx.run(OPERATOR_SQL.insertSession, [s.tokenHash, s.operatorId, s.generation, s.at])
  }
  async findSession(tokenHash: Uint8Array): Promise<SessionRow | undefined> {
    const rows = await this.tx.q(OPERATOR_SQL.findSession, [tokenHash])
    return rows[0] === undefined ? undefined : toSession(rows[0])
  }
  async touchSession(tokenHash: Uint8Array, at: number): Promise<void> {
    await this.tx.run(OPERATOR_SQL.touchSession, [tokenHash, at])
  }
  async deleteSession(tokenHash: Uint8Array): Promise<void> {
    await this.tx.run(OPERATOR_SQL.deleteSession, [tokenHash])
  }
  async deleteSessionsOf(operatorId: number): Promise<number> {
    return this.tx.run(OPERATOR_SQL.deleteSessionsOf, [operatorId])
  }
  async deleteIdleSessions(seenBefore: number, createdBefore: number): Promise<number> {
    return this.tx.run(OPERATOR_SQL.deleteIdleSessions, [seenBefore, createdBefore])
  }
  async nthAttempt(scope: Uint8Array, n: number): Promise<number | undefined> {
    await this.locks.named(scopeLock(scope))
    const rows = await this.tx.q(OPERATOR_SQL.nthAttempt, [scope, n - 1])
    return numOrNull(rows[0]?.at) ?? undefined
  }
  async recordAttempt(scope: Uint8Array, at: number): Promise<number> {
    await this.locks.named(scopeLock(scope))
    return num((await this.tx.q(OPERATOR_SQL.recordAttempt, [scope, at]))[0]!.seq)
  }
  async forgetAttempt(id: number): Promise<void> {
    await this.tx.run(OPERATOR_SQL.forgetAttempt, [id])
  }
  async deleteAttemptsBefore(before: number): Promise<void> {
    await this.tx.run(OPERATOR_SQL.deleteAttemptsBefore, [before])
  }
}

export class PgAuditLog implements AuditLog {
  constructor(private readonly tx: Tx) {}
  async append(e: AuditEntry): Promise<void> {
    await this.tx.run(AUDIT_SQL.append, [e.at, e.operator, e.source, e.action, e.subject, JSON.stringify(e.details)])
  }
  async list(q: AuditQuery): Promise<AuditRow[]> {
    return (await this.tx.q(AUDIT_SQL.list, auditListParams(q))).map(toAuditRow)
  }
}
