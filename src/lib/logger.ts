/**
 * A small structured logger: JSON lines by default, readable text when asked.
 * Callers pass fields that are already safe: keys, codes and clear recipients
 * are never handed to it (docs/api.md#errors).
 *
 * Values may still come from a client (a recipient's mask, a provider's
 * error), so no control character reaches a terminal or a log file raw: in
 * text mode every message, name and value has them escaped (textSafe), so a
 * value holding a newline and ANSI escapes cannot print a forged line; JSON
 * escapes C0 itself, and DEL and C1 are escaped too (docs/operating.md#logs).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export type LogFields = Record<string, unknown>

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

export interface LoggerOptions {
  level?: LogLevel
  format?: 'json' | 'text'
  /** Where lines go. Given alone, every level goes there; by default debug and info go to stdout. */
  write?: (line: string) => void
  /** Where warn and error lines go: `write` when only that is given, else stderr. */
  writeErr?: (line: string) => void
  now?: () => number
  /** Which of stdout and stderr are the journal: lines there get the `<N>` priority prefix journald reads. */
  journal?: { stdout: boolean; stderr: boolean }
  /** The same warning or error (level + message) is written once per this many ms, then with `repeated: N`; 0 turns it off. */
  repeatWindowMs?: number
}

/** A logger whose level can change while it runs (`serve` on SIGHUP). */
export interface LevelLogger extends Logger {
  setLevel(level: LogLevel): void
}

export const REPEAT_WINDOW_MS = 10_000

/** sd-daemon(3) priorities: the `<N>` prefix journald turns into the line's priority. */
const PRIORITY: Record<LogLevel, string> = { debug: '<7>', info: '<6>', warn: '<4>', error: '<3>' }

/** Repeated warnings and errors: key -> when the next may be written, and how many were held back meanwhile. */
interface Repeat {
  until: number
  held: number
}

/** Control characters (C0, DEL, C1) and the backslash that starts an escape. */
const UNSAFE_TEXT = /[\x00-\x1f\x7f-\x9f\\]/
const UNSAFE_TEXT_ALL = /[\x00-\x1f\x7f-\x9f\\]/g
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' }

/**
 * Text for a text-mode line: each control character as `\xHH` (`\n`, `\r`,
 * `\t` by name), a backslash as `\\`, so an escape in the line is always
 * otpd's and the line is one line of printable text.
 */
export function textSafe(s: string): string {
  if (!UNSAFE_TEXT.test(s)) return s
  return s.replace(UNSAFE_TEXT_ALL, (c) => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** DEL and C1, which JSON.stringify leaves raw (it escapes only C0): a JSON line is printable too. */
const RAW_IN_JSON = /[\x7f-\x9f]/
const RAW_IN_JSON_ALL = /[\x7f-\x9f]/g
function jsonSafe(line: string): string {
  return RAW_IN_JSON.test(line) ? line.replace(RAW_IN_JSON_ALL, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) : line
}

export function createLogger(opts: LoggerOptions = {}): LevelLogger {
  let min = RANK[opts.level ?? 'info']
  const format = opts.format ?? 'json'
  const out = opts.write ?? stdoutLines()
  const err = opts.writeErr ?? (opts.write ? opts.write : stderrLines())
  const now = opts.now ?? Date.now
  const window = opts.repeatWindowMs ?? REPEAT_WINDOW_MS
  const repeats = new Map<string, Repeat>()
  const prefixOut = opts.journal?.stdout ?? false
  const prefixErr = opts.journal?.stderr ?? false

  /** The number of lines held back since the last one written, or null when this one is held back too. */
  const admit = (level: LogLevel, msg: string, t: number): number | null => {
    if (window <= 0) return 0
    const key = level + ' ' + msg
    const r = repeats.get(key)
    if (r && t < r.until) {
      r.held++
      return null
    }
    if (repeats.size >= 1000) for (const [k, v] of repeats) if (v.until <= t) repeats.delete(k)
    repeats.set(key, { until: t + window, held: 0 })
    return r?.held ?? 0
  }

  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return
    const t = now()
    const toErr = level === 'warn' || level === 'error'
    if (toErr) {
      const held = admit(level, msg, t)
      if (held === null) return
      if (held > 0) fields = { ...fields, repeated: held }
    }
    const write = toErr ? err : out
    const prefix = (toErr ? prefixErr : prefixOut) ? PRIORITY[level] : ''
    const time = new Date(t).toISOString()
    if (format === 'json') {
      // The same line as JSON.stringify({ time, level, msg, ...fields }), without copying the fields.
      if (fields !== undefined && ('time' in fields || 'level' in fields || 'msg' in fields)) {
        write(prefix + jsonSafe(JSON.stringify({ time, level, msg, ...fields })))
        return
      }
      const head = `${prefix}{"time":"${time}","level":"${level}","msg":${JSON.stringify(msg)}`
      const rest = fields === undefined ? '{}' : JSON.stringify(fields)
      write(jsonSafe(rest === '{}' ? head + '}' : head + ',' + rest.slice(1)))
      return
    }
    if (fields === undefined) return write(`${prefix}${time} ${level.toUpperCase().padEnd(5)} ${textSafe(msg)}`)
    const rest = Object.entries(fields)
      // A value that is no string is written as JSON (its C0 already escaped by JSON, DEL and C1 here).
      .map(([k, v]) => `${textSafe(k)}=${typeof v === 'string' ? textSafe(v) : jsonSafe(String(JSON.stringify(v)))}`)
      .join(' ')
    write(`${prefix}${time} ${level.toUpperCase().padEnd(5)} ${textSafe(msg)}${rest ? ' ' + rest : ''}`)
  }
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    setLevel: (level) => void (min = RANK[level]),
  }
}

/** How long a log line may wait to be written with the lines after it. */
export const LOG_FLUSH_MS = 20

/**
 * Lines to stdout, written together at most LOG_FLUSH_MS after the first of them
 * rather than one write(2) each (docs/benchmarks.md#small-costs-on-the-request-path),
 * at once when 64 KiB are pending, and on exit. A kill -9 can lose the last
 * LOG_FLUSH_MS of lines, never more.
 */
export function stdoutLines(out: (chunk: string) => void = streamWriter(process.stdout)): (line: string) => void {
  let pending = ''
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (pending === '') return
    const chunk = pending
    pending = ''
    out(chunk)
  }
  process.on('exit', flush)
  pendingFlushes.add(flush)
  return (line: string) => {
    pending += line + '\n'
    if (pending.length >= 64 * 1024) return flush()
    if (timer === undefined) {
      timer = setTimeout(flush, LOG_FLUSH_MS)
      // Pending lines never keep the process alive: exit writes them.
      timer.unref()
    }
  }
}

const pendingFlushes = new Set<() => void>()

/**
 * Writes every batched line now. A caller about to write straight to a stream
 * (the CLI's one-line error before exit) calls it first, so a warning logged
 * before the failure is also printed before it, not after.
 */
export function flushLogs(): void {
  for (const flush of pendingFlushes) flush()
}

/** Lines to stderr, batched like stdoutLines. */
export function stderrLines(): (line: string) => void {
  return stdoutLines(streamWriter(process.stderr))
}

/**
 * Writes to a standard stream that may be closed under us (`otpd serve | head`,
 * a journal that went away): the EPIPE arrives as an 'error' event, which
 * would otherwise end the process. After it, lines to that stream are dropped;
 * the server keeps answering.
 */
export function streamWriter(stream: NodeJS.WriteStream): (chunk: string) => void {
  let broken = false
  if (!guarded.has(stream)) {
    guarded.add(stream)
    stream.on('error', () => brokenStreams.add(stream))
  }
  return (chunk) => {
    if (broken || brokenStreams.has(stream)) return void (broken = true)
    try {
      stream.write(chunk)
    } catch {
      broken = true
    }
  }
}

const guarded = new WeakSet<NodeJS.WriteStream>()
const brokenStreams = new WeakSet<NodeJS.WriteStream>()

/** A logger that keeps lines in memory; tests read them to prove what was (not) logged. */
export function createMemoryLogger(format: LoggerOptions['format'] = 'json'): Logger & { lines: string[] } {
  const lines: string[] = []
  return Object.assign(createLogger({ level: 'debug', format, write: (l) => lines.push(l) }), { lines })
}
