/**
 * A minimal Prometheus registry: counters, gauges read at scrape time, and
 * histograms, rendered in the text exposition format 0.0.4. Label values are
 * escaped (backslash, double quote, newline) so an operator-chosen account
 * name cannot break the output. Values live in this process only.
 */
type Labels = Record<string, string>

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

interface Metric {
  render(): string[]
}

const escapeLabel = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')
const escapeHelp = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`)
  return parts.length ? `{${parts.join(',')}}` : ''
}

function number(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

/** Series keyed by their label values in the declared label order. */
class Series<T> {
  /**
   * One map level per label name, the last level holding the series. Runs
   * several times per request: plain look-ups, no key string built per call.
   */
  private readonly root = new Map<string, unknown>()
  private readonly all: { labels: Labels; value: T }[] = []
  constructor(
    private readonly labelNames: readonly string[],
    private readonly init: () => T,
  ) {}
  get(labels: Labels): T {
    const names = this.labelNames
    let level = this.root
    const last = names.length - 1
    for (let i = 0; i < last; i++) {
      const v = labels[names[i]!] ?? ''
      let next = level.get(v) as Map<string, unknown> | undefined
      if (next === undefined) {
        next = new Map()
        level.set(v, next)
      }
      level = next
    }
    const v = last < 0 ? '' : (labels[names[last]!] ?? '')
    let s = level.get(v) as { labels: Labels; value: T } | undefined
    if (s === undefined) {
      const ordered: Labels = {}
      for (const n of names) ordered[n] = labels[n] ?? ''
      s = { labels: ordered, value: this.init() }
      level.set(v, s)
      this.all.push(s)
    }
    return s.value
  }
  entries() {
    return [...this.all]
  }
}

export class Counter implements Metric {
  private readonly series
  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly string[] = [],
  ) {
    this.series = new Series<{ n: number }>(labelNames, () => ({ n: 0 }))
  }
  inc(labels: Labels = {}, by = 1): void {
    this.series.get(labels).n += by
  }
  /** Makes a series visible at 0 before its first event (rate() needs a starting point). */
  touch(labels: Labels = {}): void {
    this.series.get(labels)
  }
  value(labels: Labels = {}): number {
    return this.series.get(labels).n
  }
  render(): string[] {
    return [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} counter`,
      ...this.series.entries().map((s) => `${this.name}${labelText(s.labels)} ${number(s.value.n)}`),
    ]
  }
}

/** A gauge whose samples are computed when scraped (balances, file sizes). */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly collect: () => { labels?: Labels; value: number }[],
  ) {}
  render(): string[] {
    return [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} gauge`,
      ...this.collect().map((s) => `${this.name}${labelText(s.labels ?? {})} ${number(s.value)}`),
    ]
  }
}

export class Histogram implements Metric {
  private readonly series
  constructor(
    readonly name: string,
    private readonly help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {
    // observe() counts from the top bucket down and stops at the first too small.
    if (buckets.some((le, i) => i > 0 && le <= buckets[i - 1]!)) throw new Error(`${name}: buckets must be in increasing order`)
    this.series = new Series<{ counts: number[]; sum: number; count: number }>(labelNames, () => ({
      counts: buckets.map(() => 0),
      sum: 0,
      count: 0,
    }))
  }
  observe(labels: Labels, value: number): void {
    const s = this.series.get(labels)
    const { buckets } = this
    for (let i = buckets.length - 1; i >= 0 && value <= buckets[i]!; i--) s.counts[i]! += 1
    s.sum += value
    s.count += 1
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`]
    for (const { labels, value } of this.series.entries()) {
      for (const [i, le] of this.buckets.entries()) lines.push(`${this.name}_bucket${labelText({ ...labels, le: number(le) })} ${value.counts[i]}`)
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${value.count}`)
      lines.push(`${this.name}_sum${labelText(labels)} ${number(value.sum)}`)
      lines.push(`${this.name}_count${labelText(labels)} ${value.count}`)
    }
    return lines
  }
}

export class Registry {
  private readonly metrics: Metric[] = []
  add<M extends Metric>(metric: M): M {
    this.metrics.push(metric)
    return metric
  }
  /** The exposition text. A gauge whose collector fails is left out rather than failing the scrape. */
  render(onError: (name: string, err: unknown) => void = () => {}): string {
    const lines: string[] = []
    for (const m of this.metrics) {
      try {
        lines.push(...m.render())
      } catch (err) {
        onError((m as { name?: string }).name ?? '?', err)
      }
    }
    return lines.join('\n') + '\n'
  }
}
