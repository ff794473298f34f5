/**
 * Builds the release archives (docs/install.md#release-archives):
 *   scripts/release VERSION [--target T]... [--out DIR]
 * writes DIR/otpd-VERSION-TARGET.tar.gz for each target (all five by default)
 * and DIR/SHA256SUMS; DIR is dist/release/VERSION unless given.
 *   scripts/release --check [--keep DIR]
 * builds them all for a check version and runs the acceptance check on them
 * (scripts/packaging/check.ts), as CI does.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { packArchive, stageArchive, writeSums } from './archive.ts'
import { buildBinary, bunMismatch, ROOT } from './build.ts'
import { archiveBase, isTarget, releaseVersion, TARGETS, type Target } from './targets.ts'

export interface Release {
  version: string
  dir: string
  /** The archives' file names, in the order of the targets. */
  archives: string[]
  sums: string
}

/** The commit's time, so that archives built again from it are the same (SOURCE_DATE_EPOCH wins). */
function sourceDate(): number {
  const fromEnv = Number(process.env.SOURCE_DATE_EPOCH)
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv
  const p = Bun.spawnSync(['git', 'log', '-1', '--format=%ct'], { cwd: ROOT })
  const t = Number(p.stdout.toString().trim())
  return p.exitCode === 0 && t > 0 ? t : Math.floor(Date.now() / 1000)
}

/** Builds, stages and packs each target into `dir`, then writes SHA256SUMS. */
export async function buildRelease(version: string, targets: Target[], dir: string, say: (line: string) => void = console.log): Promise<Release> {
  const mismatch = bunMismatch()
  if (mismatch) throw new Error(mismatch)
  mkdirSync(dir, { recursive: true })
  const stageRoot = join(dir, '.stage')
  const mtime = sourceDate()
  const archives: string[] = []
  try {
    for (const target of targets) {
      const t0 = performance.now()
      const base = archiveBase(version, target)
      const stage = join(stageRoot, base)
      rmSync(stage, { recursive: true, force: true })
      mkdirSync(stage, { recursive: true })
      buildBinary(target, version, join(stageRoot, `otpd-${target}`))
      stageArchive(stage, join(stageRoot, `otpd-${target}`))
      packArchive(stage, join(dir, `${base}.tar.gz`), mtime)
      archives.push(`${base}.tar.gz`)
      const mb = (statSync(join(dir, `${base}.tar.gz`)).size / 1e6).toFixed(1)
      say(`release: ${base}.tar.gz (${mb} MB, ${((performance.now() - t0) / 1000).toFixed(1)} s)`)
    }
  } finally {
    rmSync(stageRoot, { recursive: true, force: true })
  }
  const sums = await writeSums(dir, archives)
  say(`release: ${sums}`)
  return { version, dir, archives, sums }
}

const USAGE = `usage: scripts/release VERSION [--target T]... [--out DIR]
       scripts/release --check [--keep DIR]
targets: ${Object.keys(TARGETS).join(', ')} (all by default); see docs/install.md#building-a-release`

function usage(problem: string): never {
  console.error(`release: ${problem}\n${USAGE}`)
  process.exit(2)
}

interface Args {
  check: boolean
  version?: string
  targets: Target[]
  out?: string
}

function parseArgs(argv: string[]): Args {
  const a: Args = { check: false, targets: [] }
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i] as string
    const value = () => argv[++i] ?? usage(`${w} needs a value`)
    if (w === '--check') a.check = true
    else if (w === '--target') {
      const t = value()
      if (!isTarget(t)) usage(`unknown target '${t}'`)
      a.targets.push(t)
    } else if (w === '--out' || w === '--keep') a.out = resolve(value())
    else if (w === '-h' || w === '--help') {
      console.log(`Builds the release archives and SHA256SUMS, or checks them.\n${USAGE}`)
      process.exit(0)
    } else if (w.startsWith('-')) usage(`unknown option '${w}'`)
    else if (a.version === undefined) a.version = releaseVersion(w) ?? usage(`'${w}' is not a version such as 1.2.0 or 1.2.0-rc.1`)
    else usage(`unexpected argument '${w}'`)
  }
  return a
}

if (import.meta.main) {
  const args = parseArgs(process.argv.slice(2))
  if (args.check) {
    const { runCheck } = await import('./check.ts')
    process.exit(await runCheck(args.out))
  }
  if (args.version === undefined) usage('give the version')
  const targets = args.targets.length > 0 ? args.targets : (Object.keys(TARGETS) as Target[])
  try {
    await buildRelease(args.version, targets, args.out ?? join(ROOT, 'dist', 'release', args.version))
  } catch (err) {
    console.error(`release: ${(err as Error).message}`)
    process.exit(1)
  }
}
