/**
 * A small structured logger: JSON lines by default, readable text when asked.
 * Callers pass fields that are already safe: keys, codes and clear recipients
 * are never handed to it (DECISIONS.md section 9).
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
  write?: (line: string) => void
  now?: () => number
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const min = RANK[opts.level ?? 'info']
  const format = opts.format ?? 'json'
  const write = opts.write ?? stdoutLines()
  const now = opts.now ?? Date.now
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return
    const time = new Date(now()).toISOString()
    if (format === 'json') {
      // The same line as JSON.stringify({ time, level, msg, ...fields }), without copying the fields.
      if (fields !== undefined && ('time' in fields || 'level' in fields || 'msg' in fields)) {
        write(JSON.stringify({ time, level, msg, ...fields }))
        return
      }
      const head = `{"time":"${time}","level":"${level}","msg":${JSON.stringify(msg)}`
      const rest = fields === undefined ? '{}' : JSON.stringify(fields)
      write(rest === '{}' ? head + '}' : head + ',' + rest.slice(1))
      return
    }
    if (fields === undefined) return write(`${time} ${level.toUpperCase().padEnd(5)} ${msg}`)
    const rest = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ')
    write(`${time} ${level.toUpperCase().padEnd(5)} ${msg}${rest ? ' ' + rest : ''}`)
  }
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  }
}

/** How long a log line may wait to be written with the lines after it. */
export const LOG_FLUSH_MS = 20

/**
 * Lines to stdout, written together at most LOG_FLUSH_MS after the first of
 * them instead of one write(2) each (a request log line per request cost
 * about a tenth of a send; BENCHMARKS.md), at once when 64 KiB are pending,
 * and on exit. A kill -9 can lose the last LOG_FLUSH_MS of lines, never more.
 */
export function stdoutLines(out: (chunk: string) => void = (c) => void process.stdout.write(c)): (line: string) => void {
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

/** A logger that keeps lines in memory; tests read them to prove what was (not) logged. */
export function createMemoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  return Object.assign(createLogger({ level: 'debug', write: (l) => lines.push(l) }), { lines })
}
