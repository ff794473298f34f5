/**
 * The pieces the suite shares with scripts/: otpd processes and their CLI,
 * the ledger check, PostgreSQL nodes and their load, the secret scan, the
 * fuzz runner and the shutdown round. They live in scripts/kit/ so that no
 * script imports a test file; tests import them from here, with the rest of
 * their kit.
 */
export { cli, cliAsync, cliJson, makeEnv, post, prng, runFromSource, spawnServer, startServer, unthrottledNoop } from '../../scripts/kit/otpd.ts'
export type { OtpdEnv, ServerProc } from '../../scripts/kit/otpd.ts'
export {
  emptyAcknowledged,
  inForceUnacknowledged,
  ledgerRows,
  ledgerViolations,
  pgSnapshot,
  rowOf,
  sends,
} from '../../scripts/kit/ledger.ts'
export { pgEnv, startNodes, stopNodes } from '../../scripts/kit/pg-nodes.ts'
export { startLoad } from '../../scripts/kit/pg-load.ts'
export { scan } from '../../scripts/kit/scan.ts'
export type { Secret } from '../../scripts/kit/scan.ts'
export { runFuzz } from '../../scripts/kit/fuzz-runner.ts'
export { shutdownRound } from '../../scripts/kit/shutdown-round.ts'
