/**
 * The container image, built with podman from scripts/container/Dockerfile
 * and checked as docs/install.md#the-container-image describes it: a
 * non-root user, the volume, both ports, a health check; then its filesystem
 * run by container-run.sh (chroot, root read-only, only the volume
 * writable), where otpd must start as that user, answer the health check,
 * create a key from a second process against the same volume, send and
 * verify, and stop on SIGTERM. Container runtimes often cannot start a
 * container on CI machines (this one: crun's setrlimit is refused), a chroot
 * can. The base: debian:bookworm-slim, or when podman has none, Debian's
 * minbase made by debootstrap and imported under that name (cached).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './build.ts'

const BASE = 'debian:bookworm-slim'
const MIRROR = 'http://deb.debian.org/debian'

function run(cmd: string[], opts: { cwd?: string; stdout?: 'pipe' | 'inherit' } = {}): string {
  const p = Bun.spawnSync(cmd, { cwd: opts.cwd, stdout: 'pipe', stderr: 'pipe' })
  if (p.exitCode !== 0) throw new Error(`${cmd.join(' ')} exited with ${p.exitCode}: ${p.stderr.toString().slice(-2000)}`)
  return p.stdout.toString()
}

/** debian:bookworm-slim in podman's store: present, or imported from a debootstrap minbase (cached as a tar). */
function ensureBase(): string {
  if (Bun.spawnSync(['podman', 'image', 'exists', BASE]).exitCode === 0) return `${BASE} (present)`
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'otpd-release')
  const tarball = join(cache, 'debian-bookworm-minbase.tar')
  if (!existsSync(tarball)) {
    const dir = join(cache, 'bookworm')
    mkdirSync(cache, { recursive: true })
    run(['rm', '-rf', dir])
    run(['debootstrap', '--variant=minbase', 'bookworm', dir, MIRROR])
    run(['tar', '-C', dir, '--numeric-owner', '-cf', `${tarball}.tmp`, '.'])
    run(['mv', `${tarball}.tmp`, tarball])
    run(['rm', '-rf', dir])
  }
  run(['podman', 'import', tarball, BASE])
  return `${BASE} (debootstrap --variant=minbase bookworm, imported)`
}

interface ImageConfig {
  User?: string
  Env?: string[]
  Cmd?: string[]
  WorkingDir?: string
  ExposedPorts?: Record<string, unknown>
  Volumes?: Record<string, unknown>
  Healthcheck?: { Test?: string[] }
}

/** The image's config, checked against what docs/install.md promises. */
function checkedConfig(image: string): ImageConfig & { health: string } {
  const [info] = JSON.parse(run(['podman', 'image', 'inspect', image, '--format', 'json'])) as { Config: ImageConfig; Healthcheck?: { Test?: string[] } }[]
  const c = info?.Config ?? {}
  const test = c.Healthcheck?.Test ?? info?.Healthcheck?.Test ?? []
  const problems: string[] = []
  if (!/^[1-9][0-9]*:[1-9][0-9]*$/.test(c.User ?? '')) problems.push(`User is '${c.User}', not a non-root uid:gid`)
  if (JSON.stringify(c.Cmd) !== '["otpd","serve"]') problems.push(`Cmd is ${JSON.stringify(c.Cmd)}`)
  if (!c.Volumes || !('/var/lib/otpd' in c.Volumes)) problems.push('no volume /var/lib/otpd')
  if (JSON.stringify(Object.keys(c.ExposedPorts ?? {}).sort()) !== '["8080/tcp","9090/tcp"]') problems.push(`ports ${Object.keys(c.ExposedPorts ?? {})}`)
  if (test[0] !== 'CMD' || test[1] !== 'bash' || test[2] !== '-c' || typeof test[3] !== 'string') problems.push(`health check ${JSON.stringify(test)}`)
  if (problems.length > 0) throw new Error(`the image's config: ${problems.join('; ')}`)
  return { ...c, health: test[3] as string }
}

/** Builds the image from the unpacked Linux archive `context`, then runs and checks it; returns what it proved. */
export function checkContainer(context: string, version: string, work: string): string {
  const base = ensureBase()
  const image = `localhost/otpd-release-check:${version}`
  const name = `otpd-release-check-${process.pid}`
  const t = performance.now()
  run(['podman', 'build', '--format', 'docker', '--isolation=chroot', '-f', join(ROOT, 'scripts/container/Dockerfile'), '-t', image, context])
  const built = ((performance.now() - t) / 1000).toFixed(1)
  try {
    const c = checkedConfig(image)
    const rootfs = join(work, 'rootfs')
    const volume = join(work, 'volume')
    const out = join(work, 'container-out')
    for (const d of [rootfs, volume, out]) mkdirSync(d, { recursive: true })
    const [uid, gid] = (c.User as string).split(':').map(Number) as [number, number]
    run(['chown', `${uid}:${gid}`, volume])
    run(['podman', 'create', '--name', name, image])
    try {
      run(['bash', '-o', 'pipefail', '-c', `podman export ${name} | tar -x -C '${rootfs}'`])
    } finally {
      Bun.spawnSync(['podman', 'rm', '-f', name])
    }
    const tools = ['bun', 'node', 'npm', 'gcc', 'cc', 'make'].filter((t) => ['usr/bin', 'usr/local/bin'].some((d) => existsSync(join(rootfs, d, t))))
    if (tools.length > 0) throw new Error(`the image holds build tools: ${tools.join(', ')}`)
    const script = join(import.meta.dir, 'container-run.sh')
    run([
      'unshare',
      '--mount',
      '--net',
      '--pid',
      '--fork',
      '--propagation',
      'private',
      'bash',
      script,
      rootfs,
      volume,
      out,
      c.User as string,
      c.WorkingDir ?? '/',
      c.health,
      ...(c.Env ?? []),
      '--',
      ...(c.Cmd ?? []),
    ])
    return `built in ${built} s on ${base}, no build tools in it; ${verdict(out, volume, uid, version)}`
  } finally {
    Bun.spawnSync(['podman', 'rmi', '-f', image])
  }
}

/** What container-run.sh recorded, checked; throws at the first problem. */
function verdict(out: string, volume: string, uid: number, version: string): string {
  const read = (f: string) => (existsSync(join(out, f)) ? readFileSync(join(out, f), 'utf8') : '')
  const log = read('serve.log')
  if (read('health') !== 'healthy\n') throw new Error(`the health check never answered; serve printed:\n${log}`)
  const uids = /^Uid:\s+(.*)$/m.exec(read('status'))?.[1]?.split(/\s+/) ?? []
  if (uids.length !== 4 || uids.some((u) => Number(u) !== uid)) throw new Error(`otpd ran with uids ${uids.join(' ')}, not ${uid}`)
  if (!/"verified":true/.test(read('verify.json')))
    throw new Error(`verify answered ${read('verify.json')} (send: ${read('send.json')}); serve printed:\n${log}`)
  if (!read('metrics').includes(`otpd_build_info{version="${version}"} 1`)) throw new Error("the admin listener's /metrics lacks the build info")
  if (read('serve.rc').trim() !== '0') throw new Error(`serve exited with ${read('serve.rc').trim()} on SIGTERM:\n${log}`)
  const files = readdirSync(volume).sort()
  const foreign = files.filter((f) => statSync(join(volume, f)).uid !== uid)
  if (!files.includes('otpd.db') || !files.includes('otpd.secret') || foreign.length > 0)
    throw new Error(`the volume holds ${files.join(', ')} (not the user's: ${foreign.join(', ')})`)
  return `ran as uid ${uid} with the root read-only; health check answered; keys create from a second process, send, verify; volume: ${files.join(', ')}; stopped on SIGTERM`
}
