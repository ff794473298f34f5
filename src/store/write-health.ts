/**
 * Whether writes are failing, for /readyz: read-only probes cannot see a full
 * disk or a read-only file system, which only fail when a write reaches the
 * file. Each write batch reports how it ended (store/sqlite/storage.ts); a failure
 * makes the database not ready until a write succeeds, or until FORGET_MS
 * pass with no new failure (an idle server cannot know it recovered
 * otherwise, and a load balancer that took it out would never send the write
 * that tells).
 */
export const FORGET_MS = 5_000

export class WriteHealth {
  private failure: { at: number; message: string } | undefined

  constructor(private readonly now: () => number) {}

  /** `err` null: a batch committed. */
  record(err: unknown): void {
    if (err === null) this.failure = undefined
    else this.failure = { at: this.now(), message: err instanceof Error ? err.message : String(err) }
  }

  /** The problem while writes fail, or null. */
  problem(): string | null {
    const f = this.failure
    if (f === undefined) return null
    if (this.now() - f.at >= FORGET_MS) {
      this.failure = undefined
      return null
    }
    return `writes are failing: ${f.message}`
  }
}
