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
  const write = opts.write ?? ((line: string) => process.stdout.write(line + '\n'))
  const now = opts.now ?? Date.now
  const emit = (level: LogLevel, msg: string, fields: LogFields = {}) => {
    if (RANK[level] < min) return
    const time = new Date(now()).toISOString()
    if (format === 'json') {
      write(JSON.stringify({ time, level, msg, ...fields }))
      return
    }
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

/** A logger that keeps lines in memory; tests read them to prove what was (not) logged. */
export function createMemoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  return Object.assign(createLogger({ level: 'debug', write: (l) => lines.push(l) }), { lines })
}
