/**
 * A release archive as scripts/release lays it out (scripts/packaging/archive.ts),
 * with a stub binary (no build needed): its files, and its copy of
 * scripts/install.sh run from the unpacked directory with DESTDIR and without
 * Bun, installing exactly what the clone's installer installs. The real archives, built and
 * installed: scripts/release --check (docs/install.md#checking-a-release).
 */
import { describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stageArchive } from '../../scripts/packaging/archive.ts'
import { tempDir } from '../kit/cleanup.ts'
import { install, installWith, REPO, writeStub } from '../kit/install.ts'

/** Every file under `dir` as `mode path`, sorted. */
function listing(dir: string): string[] {
  const files: string[] = []
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) walk(p)
      else files.push(`${(statSync(join(dir, p)).mode & 0o7777).toString(8).padStart(4, '0')} ${p}`)
    }
  }
  walk('')
  return files.sort()
}

/** An unpacked archive around a stub otpd; returns its directory. */
function archive(tmp: string): { dir: string; stub: string } {
  const stub = join(tmp, 'stub')
  writeStub(stub, 'otpd-from-archive')
  const dir = join(tmp, 'otpd-1.2.3-linux-x64')
  stageArchive(dir, stub)
  return { dir, stub }
}

/** A PATH whose `bun` fails loudly: the archive's installer must never need it. */
function pathWithoutBun(tmp: string): string {
  const bin = join(tmp, 'no-bun')
  mkdirSync(bin)
  writeFileSync(join(bin, 'bun'), '#!/bin/sh\necho "bun was called: $*" >&2\nexit 97\n')
  chmodSync(join(bin, 'bun'), 0o755)
  return `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`
}

const PAGES = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md') || f.endsWith('.png'))

describe.skipIf(process.platform !== 'linux')('a release archive', () => {
  test('holds the binary, install.sh, the unit, the example config, the README and docs/, as in the repository', () => {
    const { dir, stub } = archive(tempDir('otpd-archive-'))
    expect(listing(dir)).toEqual(
      ['0755 otpd', '0755 install.sh', '0644 otpd.service', '0644 otp.config.example.toml', '0644 README.md', ...PAGES.map((f) => `0644 docs/${f}`)].sort(),
    )
    expect(readFileSync(join(dir, 'otpd'), 'utf8')).toBe(readFileSync(stub, 'utf8'))
    for (const [from, to] of [
      ['scripts/install.sh', 'install.sh'],
      ['scripts/otpd.service', 'otpd.service'],
      ['otp.config.example.toml', 'otp.config.example.toml'],
      ['README.md', 'README.md'],
      ...PAGES.map((f) => [`docs/${f}`, `docs/${f}`]),
    ] as [string, string][]) {
      expect(readFileSync(join(dir, to), 'utf8')).toBe(readFileSync(join(REPO, from), 'utf8'))
    }
  })

  test('its install.sh, without Bun, installs exactly what the clone installs, with the archive binary', () => {
    const tmp = tempDir('otpd-archive-install-')
    const { dir, stub } = archive(tmp)
    const fromArchive = installWith(join(dir, 'install.sh'), { DESTDIR: join(tmp, 'a'), PATH: pathWithoutBun(tmp) })
    expect(fromArchive.stderr).toBe('')
    expect(fromArchive.code).toBe(0)
    const fromClone = install({ DESTDIR: join(tmp, 'c'), OTPD_BINARY: stub })
    expect(fromClone.code).toBe(0)
    const files = listing(join(tmp, 'a'))
    expect(files).toEqual(listing(join(tmp, 'c')))
    expect(files).toContain('0755 usr/local/bin/otpd')
    for (const f of files) {
      const p = f.slice(5)
      expect(`${p}: ${readFileSync(join(tmp, 'a', p), 'utf8')}`).toBe(`${p}: ${readFileSync(join(tmp, 'c', p), 'utf8')}`)
    }
    expect(readFileSync(join(tmp, 'a', 'usr/local/bin/otpd'), 'utf8')).toBe('#!/bin/sh\necho otpd-from-archive\n')
    expect(fromArchive.stdout.replaceAll(join(tmp, 'a'), 'D')).toBe(fromClone.stdout.replaceAll(join(tmp, 'c'), 'D'))
  })

  test('an archive without its binary is refused with a message that says where it belongs', () => {
    const tmp = tempDir('otpd-archive-nobinary-')
    const { dir } = archive(tmp)
    rmSync(join(dir, 'otpd'))
    const r = installWith(join(dir, 'install.sh'), { DESTDIR: join(tmp, 'd') })
    expect(r.stderr).toBe(
      `install.sh: error: ${dir}/otpd does not exist: the archive holds otpd beside install.sh (or give another binary with --binary PATH)\n`,
    )
    expect(r.code).toBe(1)
  })

  test('an archive without its docs is refused, naming both places install.sh runs from', () => {
    const tmp = tempDir('otpd-archive-nodocs-')
    const { dir } = archive(tmp)
    rmSync(join(dir, 'docs'), { recursive: true })
    const r = installWith(join(dir, 'install.sh'), { DESTDIR: join(tmp, 'd') })
    expect(r.stderr).toBe(
      `install.sh: error: ${dir}/docs is missing: run this script from an unpacked otpd release archive or a clone of the otpd repository\n`,
    )
    expect(r.code).toBe(1)
  })
})
