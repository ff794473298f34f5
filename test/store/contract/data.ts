/**
 * What the contract cases share: a fresh engine per case, an explicit time
 * (never the wall clock), and the rows a case starts from, written through
 * the repositories as the domain writes them.
 */
import { beforeEach } from 'bun:test'
import type { Repos, Storage } from '../../../src/otp/ports/index.ts'
import type { Verification } from '../../../src/otp/types.ts'
import { afterTest } from '../../kit/cleanup.ts'
import { type ContractEngine, openContractEngine } from './engines.ts'

/** The time every case starts from. */
export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)
export const MINUTE = 60_000
/** The account every migrated database has. */
export const DEFAULT_ACCOUNT = 1

/** A fresh engine for each case of the file, closed after it: the getter answers the current one. */
export function useEngine(): () => ContractEngine {
  let engine: ContractEngine | undefined
  beforeEach(async () => {
    const opened = await openContractEngine()
    engine = opened
    afterTest(async () => {
      engine = undefined
      await opened.close()
    })
  })
  return () => {
    if (engine === undefined) throw new Error('no engine: use it inside a test')
    return engine
  }
}

/** A 16-byte subject (a recipient or IP hash) named by a label. */
export function hash(label: string): Uint8Array {
  const out = new Uint8Array(16)
  const bytes = new TextEncoder().encode(label)
  out.set(bytes.subarray(0, 16))
  out[15] = bytes.length
  return out
}

/** A new account and an active key on it. */
export async function accountWithKey(s: Storage, name: string, prefix = `pk_${name}`): Promise<{ accountId: number; keyId: number }> {
  return s.write(async (r) => {
    const account = await r.admin.insertAccount(name, T0)
    const keyId = await r.admin.insertKey({ accountId: account.id, name: 'k', prefix, keyHash: `hash-of-${prefix}`, at: T0 })
    return { accountId: account.id, keyId }
  })
}

/** A new active key on the default account; returns its id. */
export async function defaultKey(s: Storage, prefix = 'pk_default'): Promise<number> {
  return s.write((r) => r.admin.insertKey({ accountId: DEFAULT_ACCOUNT, name: 'k', prefix, keyHash: `hash-of-${prefix}`, at: T0 }))
}

/** An active, charged sms verification created at `T0`, with its delivery `sending`; `o` changes any field. */
export function verification(seq: number, keyId: number, o: Partial<Verification> = {}): Verification {
  return {
    seq,
    id: `v-${seq}-${keyId}`,
    keyId,
    accountId: DEFAULT_ACCOUNT,
    channel: 'sms',
    recipientHash: hash('recipient'),
    recipientMask: '+1415***0001',
    codeHash: hash(`code-${seq}`),
    testMode: null,
    status: 'active',
    charged: true,
    createdAt: T0,
    expiresAt: T0 + 10 * MINUTE,
    usedAt: null,
    failedAttempts: 0,
    lockedUntil: null,
    delivery: 'sending',
    deliveryProvider: null,
    deliveryUpdatedAt: null,
    country: null,
    fraudMonitored: null,
    ...o,
  }
}

/** Numbers and inserts a verification (`verification()` with `o`) in one write; returns it as inserted. */
export async function insertVerification(s: Storage, keyId: number, o: Partial<Verification> = {}): Promise<Verification> {
  return s.write(async (r) => {
    const v = verification(await r.verifications.nextSeq(), keyId, o)
    await r.verifications.insert(v)
    return v
  })
}

/** A verification's row as the repositories read it back. */
export function reread(s: Storage, v: Verification): Promise<Verification | undefined> {
  return s.read((r) => r.verifications.findById(v.id, v.seq))
}

export type { ContractEngine, Repos }
