/**
 * The tests' throwaway PostgreSQL cluster: one per test process, started by
 * the first caller, gone at exit. The code lives in scripts/kit/pg-cluster.ts
 * so that scripts (bench) use it without importing test files.
 */
export { freshDatabase, migratedDatabase, pgBinDir, sharedCluster, startCluster } from '../../scripts/kit/pg-cluster.ts'
export type { PgCluster } from '../../scripts/kit/pg-cluster.ts'
