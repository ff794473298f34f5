/**
 * Found while checking crash safety (scripts/proofs/crash.ts): the generated server
 * secret was created empty and then written, so a process starting at the same
 * moment (a CLI beside a fresh `serve`) could read an empty file and fail with
 * "not a valid otpd secret", and a crash in between left that empty file for
 * good. Now it appears whole or not at all. Processes race on fresh directories.
 */
import { expect } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testSqliteOnly } from '../kit/harness.ts'

const SECRET_TS = join(import.meta.dir, '..', '..', 'src', 'store', 'secret.ts')

testSqliteOnly(
  '12 processes creating the secret at the same moment all get the same, valid one',
  async () => {
    for (let round = 0; round < 8; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'otpd-secret-race-'))
      try {
        const db = join(dir, 'otpd.db')
        // Each process spins until the same instant, then loads (creating) the secret.
        const code = `import { loadSecret } from ${JSON.stringify(SECRET_TS)}; const go = Number(process.argv[2]); while (Date.now() < go) {}
        try { console.log(Buffer.from(loadSecret(undefined, ${JSON.stringify(db)})).toString('hex')) } catch (e) { console.log('FAIL ' + e) }`
        const go = String(Date.now() + 700)
        const procs = Array.from({ length: 12 }, () => Bun.spawn(['bun', '-e', code, go], { stdout: 'pipe' }))
        const outs = (await Promise.all(procs.map((p) => new Response(p.stdout).text()))).map((o) => o.trim())
        expect(outs.filter((o) => o.startsWith('FAIL'))).toEqual([])
        expect(new Set(outs).size).toBe(1)
        expect(outs[0]).toMatch(/^[0-9a-f]{64}$/)
        expect(readdirSync(dir)).toEqual(['otpd.secret']) // no temporary file left behind
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  },
  60_000,
)
