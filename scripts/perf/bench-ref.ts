/**
 * scripts/bench --compare-ref GITREF: the reference binary built from git,
 * outside the tree. The commit's files (git archive, so the repository's
 * worktrees are left alone) go to $TMPDIR/otpd-ref-<commit>, then
 * `bun install --frozen-lockfile` and `bun run build`; a binary already
 * built there is reused.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

function run(cmd: string[], cwd: string): string {
  const p = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`${cmd.join(' ')}: ${p.stderr.toString()}`)
  return p.stdout.toString().trim()
}

export function buildRef(root: string, ref: string, log: (m: string) => void): string {
  const commit = run(['git', 'rev-parse', '--verify', `${ref}^{commit}`], root)
  const dir = join(tmpdir(), `otpd-ref-${commit.slice(0, 12)}`)
  const binary = join(dir, 'dist', 'otpd')
  if (existsSync(binary)) return binary
  log(`building the reference ${ref} (${commit.slice(0, 12)}) in ${dir}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  run(['git', 'archive', '--output', join(dir, 'tree.tar'), commit], root)
  run(['tar', '-xf', 'tree.tar'], dir)
  run(['bun', 'install', '--frozen-lockfile'], dir)
  run(['bun', 'run', 'build'], dir)
  return binary
}
