/** Rows as the console's JSON shows them: snake_case and ISO times, as the CLI's --json (never a key's value or hash). */
import type { Config } from '../config/schema.ts'
import type { AccountFraudView } from '../otp/fraud-admin.ts'
import type { AccountRow, AuditRow, KeyRow, LedgerRow } from '../otp/ports/index.ts'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export function keyView(k: KeyRow) {
  return { id: k.id, prefix: k.prefix, name: k.name, account: k.account, status: k.status, created_at: iso(k.createdAt), last_used_at: iso(k.lastUsedAt) }
}

export function accountView(a: AccountRow, f: AccountFraudView, config: Config) {
  return {
    name: a.name,
    balance: a.balance,
    code_length: a.codeLength ?? config.codes.default_length,
    code_length_is_default: a.codeLength === null,
    countries: f.allowedCountries ?? config.fraud.allowed_countries,
    countries_are_default: f.allowedCountries === null,
    daily_credit_limit: f.dailyCreditLimit,
    test_recipients: f.testRecipients,
    created_at: iso(a.createdAt),
  }
}

export function ledgerView(e: LedgerRow) {
  return {
    id: e.id,
    created_at: iso(e.createdAt),
    kind: e.kind,
    amount: e.kind === 'debit' ? -e.amount : e.amount,
    verification_id: e.verificationId,
    note: e.note,
  }
}

export function auditView(e: AuditRow) {
  return { id: e.id, at: iso(e.at), operator: e.operator, source: e.source, action: e.action, subject: e.subject, details: e.details }
}
