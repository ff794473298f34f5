/**
 * systemd sets JOURNAL_STREAM=<device>:<inode> when stdout or stderr is
 * connected to the journal (systemd.exec(5)); a stream that is the journal
 * gets `<N>` priority prefixes on its lines so `journalctl -p err` works.
 * The caller passes the variable's value (only the config loader reads the
 * environment).
 */
import { fstatSync } from 'node:fs'

export function journalStreams(journalStream: string | undefined): { stdout: boolean; stderr: boolean } {
  const m = /^(\d+):(\d+)$/.exec(journalStream ?? '')
  if (!m) return { stdout: false, stderr: false }
  const is = (fd: number) => {
    try {
      const s = fstatSync(fd, { bigint: true })
      return s.dev === BigInt(m[1]!) && s.ino === BigInt(m[2]!)
    } catch {
      return false
    }
  }
  return { stdout: is(1), stderr: is(2) }
}
