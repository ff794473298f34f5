/**
 * Compiles otpd for one release target with the release's version built in.
 * The command is package.json's "build" script (its entry points and flags,
 * the SQLite workers included) with another output, `--target` and the
 * version. Bun takes a foreign target's runtime from the npm registry
 * (`@oven/bun-<target>`, the running Bun's version), see docs/install.md.
 */
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { TARGETS, type Target } from './targets.ts'

export const ROOT = join(import.meta.dir, '..', '..')

/** The Bun that package.json pins: the runtime every archive embeds. */
export const PINNED_BUN = pkg.packageManager.split('@')[1] ?? ''

/** Why this Bun cannot build a release, or null. */
export function bunMismatch(): string | null {
  if (Bun.version === PINNED_BUN) return null
  return `bun ${Bun.version} runs this, but package.json pins bun ${PINNED_BUN}: the binaries embed the running Bun's runtime (npm install -g bun@${PINNED_BUN})`
}

/** package.json's build command for `target`, writing `outfile`. */
export function buildCommand(target: Target, version: string, outfile: string): string[] {
  const words = pkg.scripts.build.split(/\s+/)
  if (words[0] !== 'bun' || words[1] !== 'build') throw new Error(`package.json's build script does not start with "bun build": ${pkg.scripts.build}`)
  const args: string[] = []
  for (let i = 2; i < words.length; i++) {
    const w = words[i] as string
    if (w === '--outfile') i++
    else if (!w.startsWith('--outfile=') && !w.startsWith('--target')) args.push(w)
  }
  return ['bun', 'build', ...args, `--target=${TARGETS[target]}`, `--define=OTPD_RELEASE_VERSION=${JSON.stringify(version)}`, '--outfile', outfile]
}

/** Builds the binary; throws with Bun's output when it fails. */
export function buildBinary(target: Target, version: string, outfile: string): void {
  const p = Bun.spawnSync(buildCommand(target, version, outfile), { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`building ${target} failed:\n${p.stdout}${p.stderr}`)
}
