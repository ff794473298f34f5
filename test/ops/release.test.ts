/**
 * scripts/release's pieces that need no compile (scripts/packaging/): the
 * version it accepts, the compile command it derives from package.json's
 * build script, the version that command's --define builds in, and archives packed the same way twice with a SHA256SUMS that
 * sha256sum checks. Building and checking the real archives:
 * scripts/release --check (docs/install.md#checking-a-release).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { packArchive, stageArchive, writeSums } from '../../scripts/packaging/archive.ts'
import { buildCommand } from '../../scripts/packaging/build.ts'
import { releaseVersion } from '../../scripts/packaging/targets.ts'
import { tempDir } from '../kit/cleanup.ts'
import { writeStub } from '../kit/install.ts'

test('a release version is a semantic version; a leading v is dropped', () => {
  expect(['1.2.0', 'v1.2.0', '1.2.0-rc.1', '10.20.30-check'].map(releaseVersion)).toEqual(['1.2.0', '1.2.0', '1.2.0-rc.1', '10.20.30-check'])
  expect(['1.2', '', 'latest', '1.2.0/../x', '1.2.0 ', '1.2.0-'].map(releaseVersion)).toEqual([null, null, null, null, null, null])
})

test("the compile command is package.json's build with the target, the version and another output", () => {
  const cmd = buildCommand('linux-arm64', '1.2.0', '/tmp/out/otpd')
  const build = pkg.scripts.build.split(' ')
  const i = build.indexOf('--outfile')
  expect(cmd).toEqual([
    ...build.slice(0, i),
    ...build.slice(i + 2),
    '--target=bun-linux-arm64',
    '--define=OTPD_RELEASE_VERSION="1.2.0"',
    '--outfile',
    '/tmp/out/otpd',
  ])
  // The worker entry points are compiled in, as in `bun run build`.
  for (const worker of ['checkpoint-worker.ts', 'rollup-worker.ts', 'console-read-worker.ts']) expect(cmd).toContain(`src/store/sqlite/${worker}`)
})

test("the version built in is the release's, and package.json's without one", async () => {
  const dir = tempDir('otpd-version-')
  const entry = join(dir, 'print.ts')
  writeFileSync(entry, `import { VERSION } from '${join(import.meta.dir, '..', '..', 'src', 'lib', 'version.ts')}'\nconsole.log(VERSION)\n`)
  const printed = (...define: string[]) => {
    const out = join(dir, 'print.js')
    const b = Bun.spawnSync(['bun', 'build', entry, '--target=bun', ...define, '--outfile', out])
    expect(b.exitCode).toBe(0)
    return Bun.spawnSync(['bun', out]).stdout.toString().trim()
  }
  const defined = buildCommand('linux-x64', '9.8.7-rc.1', 'x').find((a) => a.startsWith('--define=')) as string
  expect(printed(defined)).toBe('9.8.7-rc.1')
  expect(printed()).toBe(pkg.version)
})

describe.skipIf(process.platform !== 'linux')('packing', () => {
  test('the same inputs give the same archive, and SHA256SUMS passes sha256sum -c', async () => {
    const tmp = tempDir('otpd-pack-')
    writeStub(join(tmp, 'stub'), 'otpd')
    stageArchive(join(tmp, 'otpd-1.2.0-linux-x64'), join(tmp, 'stub'))
    packArchive(join(tmp, 'otpd-1.2.0-linux-x64'), join(tmp, 'a.tar.gz'), 1_700_000_000)
    await Bun.sleep(1100) // a timestamp taken from the clock would now differ
    packArchive(join(tmp, 'otpd-1.2.0-linux-x64'), join(tmp, 'b.tar.gz'), 1_700_000_000)
    expect(Buffer.compare(readFileSync(join(tmp, 'a.tar.gz')), readFileSync(join(tmp, 'b.tar.gz')))).toBe(0)
    const listing = Bun.spawnSync(['tar', '-tvzf', join(tmp, 'a.tar.gz')], { env: { ...process.env, TZ: 'UTC' } })
      .stdout.toString()
      .trim()
      .split('\n')
    expect(listing[0]).toMatch(/^drwxr-xr-x 0\/0 +0 2023-11-14 22:13 otpd-1\.2\.0-linux-x64\/$/)
    expect(listing.some((l) => /^-rwxr-xr-x 0\/0 .* otpd-1\.2\.0-linux-x64\/otpd$/.test(l))).toBe(true)

    await writeSums(tmp, ['b.tar.gz', 'a.tar.gz'])
    const sums = readFileSync(join(tmp, 'SHA256SUMS'), 'utf8')
    expect(sums).toMatch(/^[0-9a-f]{64} {2}a\.tar\.gz\n[0-9a-f]{64} {2}b\.tar\.gz\n$/)
    expect(Bun.spawnSync(['sha256sum', '--strict', '-c', 'SHA256SUMS'], { cwd: tmp }).exitCode).toBe(0)
    writeFileSync(join(tmp, 'b.tar.gz'), 'changed')
    expect(Bun.spawnSync(['sha256sum', '--strict', '-c', 'SHA256SUMS'], { cwd: tmp }).exitCode).toBe(1)
  })
})
