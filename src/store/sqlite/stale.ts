/**
 * Per-process copies of stored values (the last row numbers handed out, code
 * lengths) are kept by the SQLite stores between transactions. A StaleSource
 * tells them when such copies may be wrong: another connection committed, or
 * a rollback undid a write (store/sqlite/storage.ts).
 */
export interface StaleSource {
  onStale(listener: () => void): void
}

export class StaleListeners implements StaleSource {
  private readonly listeners: (() => void)[] = []
  onStale(listener: () => void): void {
    this.listeners.push(listener)
  }
  fire(): void {
    for (const listener of this.listeners) listener()
  }
}
