/**
 * The slowest test files of a run, so the next slow test is found at once.
 * Reads the JUnit reports that `bun test --reporter=junit
 * --reporter-outfile=FILE` writes (one `<testsuite file=...>` per file, its
 * `time` in seconds), or runs `bun test` itself on the paths given.
 *
 *   bun scripts/ci/test-times.ts [--top N] REPORT.xml...   the N slowest files of these reports
 *   bun scripts/ci/test-times.ts [--top N] [PATH...]       runs bun test on PATH (or all), then the same
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface FileTime {
  file: string
  seconds: number
  tests: number
}

/** Each file's time in a JUnit report: its outermost `<testsuite>` (the nested ones are its describe blocks). */
export function fileTimes(xml: string): FileTime[] {
  const out: FileTime[] = []
  let depth = 0
  for (const tag of xml.matchAll(/<(\/?)testsuite(?=[\s>])([^>]*?)(\/?)>/g)) {
    const [, closing, attrs = '', selfClosing] = tag
    if (closing) {
      depth--
      continue
    }
    if (depth === 0) {
      const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(attrs)?.[1]
      const file = attr('file') ?? attr('name')
      if (file) out.push({ file, seconds: Number(attr('time') ?? 0), tests: Number(attr('tests') ?? 0) })
    }
    if (!selfClosing) depth++
  }
  return out
}

/** The `top` slowest, slowest first, as aligned lines. */
export function slowestLines(times: FileTime[], top: number): string[] {
  return [...times]
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, top)
    .map((t) => `${t.seconds.toFixed(1).padStart(7)} s  ${String(t.tests).padStart(4)} tests  ${t.file}`)
}

function main(args: string[]): number {
  let top = 10
  const rest: string[] = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--top') top = Number(args[++i])
    else if (args[i] === '--help' || args[i] === '-h') {
      console.log('usage: scripts/test-times [--top N] REPORT.xml... | [--top N] [PATH...]')
      return 0
    } else rest.push(args[i]!)
  }
  if (!Number.isInteger(top) || top < 1) {
    console.error('test-times: --top takes a whole number of files')
    return 2
  }
  const reports = rest.filter((a) => a.endsWith('.xml'))
  if (reports.length > 0) {
    for (const line of slowestLines(
      reports.flatMap((r) => fileTimes(readFileSync(r, 'utf8'))),
      top,
    ))
      console.log(line)
    return 0
  }
  const dir = mkdtempSync(join(tmpdir(), 'otpd-test-times-'))
  try {
    const report = join(dir, 'junit.xml')
    const run = Bun.spawnSync(['bun', 'test', '--reporter=junit', `--reporter-outfile=${report}`, ...rest], { stdout: 'inherit', stderr: 'inherit' })
    console.log(`\nthe ${top} slowest files:`)
    for (const line of slowestLines(fileTimes(readFileSync(report, 'utf8')), top)) console.log(line)
    return run.exitCode ?? 1
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) process.exit(main(process.argv.slice(2)))
