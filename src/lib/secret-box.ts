/**
 * Secrets otpd must send again later (webhook signing secrets), sealed for
 * the database with AES-256-GCM. The key is an HMAC of a fixed label under
 * the server secret (lib/secrets.ts Hasher), so a copy of the database alone
 * does not give the secrets away, and no second secret has to be kept. A
 * sealed value is version byte 1, a 12-byte random nonce, the ciphertext and
 * the 16-byte tag; a changed byte or another server secret fails to open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { Hasher } from './secrets.ts'

const VERSION = 1
const NONCE = 12
const TAG = 16
const AAD = Buffer.from('otpd sealed secret v1')

export class SecretBox {
  private readonly key: Buffer

  constructor(hasher: Hasher, label: string) {
    this.key = hasher.digest('secret-box', label)
  }

  seal(secret: string): Uint8Array {
    const nonce = randomBytes(NONCE)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce).setAAD(AAD)
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return Buffer.concat([Buffer.of(VERSION), nonce, body, cipher.getAuthTag()])
  }

  open(sealed: Uint8Array): string {
    const b = Buffer.from(sealed)
    if (b[0] !== VERSION || b.length < 1 + NONCE + TAG) throw new Error('a sealed secret is not in a known format')
    const decipher = createDecipheriv('aes-256-gcm', this.key, b.subarray(1, 1 + NONCE)).setAAD(AAD)
    decipher.setAuthTag(b.subarray(b.length - TAG))
    try {
      return Buffer.concat([decipher.update(b.subarray(1 + NONCE, b.length - TAG)), decipher.final()]).toString('utf8')
    } catch {
      throw new Error('a sealed secret cannot be opened: the server secret is not the one it was sealed with, or the value was changed')
    }
  }
}
