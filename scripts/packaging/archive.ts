/**
 * A release archive's contents and packing (docs/install.md#release-archives):
 * one directory `otpd-VERSION-TARGET/` holding the binary, install.sh, the
 * systemd unit, the example config, the README and docs/ (the pages and their
 * pictures, as install.sh installs them); and SHA256SUMS over the archives.
 */
import { chmodSync, copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { ROOT } from './build.ts'

/** Files copied from the repository: [source, name in the archive]. */
const FILES: [string, string][] = [
  ['scripts/install.sh', 'install.sh'],
  ['scripts/otpd.service', 'otpd.service'],
  ['otp.config.example.toml', 'otp.config.example.toml'],
  ['README.md', 'README.md'],
]

/** Lays out the archive's directory `dir` with `binary` as its otpd. */
export function stageArchive(dir: string, binary: string): void {
  mkdirSync(join(dir, 'docs'), { recursive: true })
  copyFileSync(binary, join(dir, 'otpd'))
  chmodSync(join(dir, 'otpd'), 0o755)
  for (const [from, to] of FILES) copyFileSync(join(ROOT, from), join(dir, to))
  chmodSync(join(dir, 'install.sh'), 0o755)
  for (const page of readdirSync(join(ROOT, 'docs'))) {
    if (page.endsWith('.md') || page.endsWith('.png')) copyFileSync(join(ROOT, 'docs', page), join(dir, 'docs', page))
  }
}

/**
 * Packs `dir` as `out` (.tar.gz) with GNU tar: entries sorted, owned by root,
 * dated `mtime` (seconds), gzip without a timestamp, so that the same inputs
 * give the same archive.
 */
export function packArchive(dir: string, out: string, mtime: number): void {
  const tar = ['tar', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=@${mtime}`, '-C', dirname(dir), '-cf', '-', basename(dir)]
  const p = Bun.spawnSync(['bash', '-o', 'pipefail', '-c', `${tar.map(quote).join(' ')} | gzip -n >${quote(out)}`], { stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`packing ${out} failed: ${p.stderr}`)
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

/** The SHA-256 of a file, in hex. */
export async function sha256(path: string): Promise<string> {
  const h = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) h.update(chunk)
  return h.digest('hex')
}

/** Writes `SHA256SUMS` beside the archives, in sha256sum's format (`sha256sum -c SHA256SUMS` checks it). */
export async function writeSums(outDir: string, archives: string[]): Promise<string> {
  const lines = await Promise.all([...archives].sort().map(async (a) => `${await sha256(join(outDir, a))}  ${a}\n`))
  const path = join(outDir, 'SHA256SUMS')
  writeFileSync(path, lines.join(''))
  return path
}
