/**
 * The pumping simulation (scripts/proofs/fraud-sim.ts) at full scale, so it cannot
 * rot: a simulated day of 2,000 legitimate and 5,000 attack sends, in enforce
 * and monitor mode. It takes about 20 s on an idle machine.
 */
import { expect, test } from 'bun:test'
import { join } from 'node:path'

test('fraud-sim: enforce charges at most 60 attack sends and refuses no legitimate one; monitor refuses nothing and decides the same', async () => {
  const p = Bun.spawn(['bun', join(import.meta.dir, '..', '..', 'scripts', 'proofs', 'fraud-sim.ts'), '--json'], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  expect(err).toBe('')
  const r = JSON.parse(out)
  expect(r.checks.map((c: { ok: boolean }) => c.ok)).toEqual([true, true, true, true])
  expect(code).toBe(0)
  expect(r.enforce.legit).toMatchObject({ sends: 2000, accepted: 2000, refused: 0 })
  expect(r.enforce.attack.sends).toBe(5000)
  expect(r.enforce.attack.charged).toBeLessThanOrEqual(60)
  expect(r.monitor.attack).toEqual({ sends: 5000, charged: 5000, refused: 0 })
  expect(r.monitor.refusals_by_rule).toEqual(r.enforce.refusals_by_rule)
}, 180_000)
