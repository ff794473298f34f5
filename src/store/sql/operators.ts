/**
 * Console operators, sessions and sign-in attempts (otp/ports/operators.ts
 * OperatorRepo): the statements both engines run, and their row mappers.
 */
import type { OperatorRow, SessionRow } from '../../otp/ports/index.ts'
import { num, type Row } from './values.ts'

const OPERATOR_COLUMNS = 'id, name, password_hash, status, created_at, password_changed_at, role, credential_generation'

export const OPERATOR_SQL = {
  insertOperator: `INSERT INTO operators (name, password_hash, created_at, password_changed_at, role) VALUES ($1, $2, $3, $3, $4) RETURNING ${OPERATOR_COLUMNS}`,
  findOperator: `SELECT ${OPERATOR_COLUMNS} FROM operators WHERE name = $1`,
  // The one parameter keeps PostgreSQL on a prepared statement (store/pg/client.ts).
  listOperators: `SELECT ${OPERATOR_COLUMNS} FROM operators WHERE id > $1 ORDER BY id`,
  // A disable ends every session made before it, including one whose password was checked before it (otp/operators.ts).
  setOperatorStatus: `UPDATE operators SET status = $2,
    credential_generation = CASE WHEN $2 = 'disabled' THEN credential_generation + 1 ELSE credential_generation END WHERE id = $1`,
  setPassword: 'UPDATE operators SET password_hash = $2, password_changed_at = $3, credential_generation = credential_generation + 1 WHERE id = $1',
  setOperatorRole: 'UPDATE operators SET role = $2 WHERE id = $1',
  insertSession: 'INSERT INTO console_sessions (token_hash, operator_id, credential_generation, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)',
  findSession: `SELECT s.operator_id, o.name AS operator, o.status AS operator_status, o.role AS operator_role,
    o.credential_generation AS operator_generation, s.credential_generation AS session_generation, s.created_at, s.last_seen_at
    FROM console_sessions s JOIN operators o ON o.id = s.operator_id WHERE s.token_hash = $1`,
  touchSession: 'UPDATE console_sessions SET last_seen_at = $2 WHERE token_hash = $1',
  deleteSession: 'DELETE FROM console_sessions WHERE token_hash = $1',
  deleteSessionsOf: 'DELETE FROM console_sessions WHERE operator_id = $1',
  deleteIdleSessions: 'DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2',
  // The n-th most recent attempt: `$2` is n - 1.
  nthAttempt: 'SELECT at FROM console_sign_in_attempts WHERE scope = $1 ORDER BY at DESC LIMIT 1 OFFSET $2',
  recordAttempt: 'INSERT INTO console_sign_in_attempts (scope, at) VALUES ($1, $2) RETURNING seq',
  forgetAttempt: 'DELETE FROM console_sign_in_attempts WHERE seq = $1',
  deleteAttemptsBefore: 'DELETE FROM console_sign_in_attempts WHERE at < $1',
} as const

export function toOperator(r: Row): OperatorRow {
  return {
    id: num(r.id),
    name: r.name as string,
    passwordHash: r.password_hash as string,
    status: r.status as OperatorRow['status'],
    createdAt: num(r.created_at),
    passwordChangedAt: num(r.password_changed_at),
    role: r.role as OperatorRow['role'],
    credentialGeneration: num(r.credential_generation),
  }
}

export function toSession(r: Row): SessionRow {
  return {
    operatorId: num(r.operator_id),
    operator: r.operator as string,
    operatorStatus: r.operator_status as SessionRow['operatorStatus'],
    operatorRole: r.operator_role as SessionRow['operatorRole'],
    operatorGeneration: num(r.operator_generation),
    sessionGeneration: num(r.session_generation),
    createdAt: num(r.created_at),
    lastSeenAt: num(r.last_seen_at),
  }
}
