/**
 * Runs every reliability script (docs/reliability.md) in turn against a fresh build of
 * dist/otpd and prints each one's figures, then a summary. Exits 1 if any
 * script found a violation. About 10 minutes on 2 cores.
 *
 * Usage: bun scripts/proofs/reliability.ts [--skip-build]
 */
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const SCRIPTS = ['crash.ts', 'fuzz.ts', 'shutdown.ts', 'cli-load.ts', 'concurrency.ts', 'secrets.ts', 'brute-force.ts']

if (!process.argv.includes('--skip-build')) {
  const b = Bun.spawnSync(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
  if (b.exitCode !== 0) process.exit(1)
}
const results: { script: string; code: number; seconds: number }[] = []
for (const script of SCRIPTS) {
  console.log(`\n### bun scripts/proofs/${script}`)
  const t = Date.now()
  const p = Bun.spawn(['bun', join(ROOT, 'scripts', 'proofs', script)], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' })
  results.push({ script, code: await p.exited, seconds: Math.round((Date.now() - t) / 1000) })
}
console.log('\n### summary')
for (const r of results) console.log(`${r.code === 0 ? 'OK  ' : 'FAIL'}  scripts/proofs/${r.script.padEnd(16)} ${r.seconds} s`)
process.exit(results.every((r) => r.code === 0) ? 0 : 1)
