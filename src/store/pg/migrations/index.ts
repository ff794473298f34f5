/**
 * The PostgreSQL migrations, embedded as text like the SQLite ones
 * (store/sqlite/migrations/index.ts). Add a line here for each file
 * `bun run db:generate:pg` writes (a test checks the journal matches).
 */
import journal from './meta/_journal.json'
import m0000 from './0000_init.sql' with { type: 'text' }
import m0001 from './0001_events_idempotency.sql' with { type: 'text' }
import m0002 from './0002_fraud.sql' with { type: 'text' }
import m0003 from './0003_fraud_prefix_keys.sql' with { type: 'text' }
import m0006 from './0006_messages.sql' with { type: 'text' }
import m0004 from './0004_console.sql' with { type: 'text' }
import m0005 from './0005_console.sql' with { type: 'text' }
import m0007 from './0007_balance_stripes.sql' with { type: 'text' }
import m0008 from './0008_key_hit.sql' with { type: 'text' }
import m0009 from './0009_endpoint_turns.sql' with { type: 'text' }
import m0010 from './0010_key_expiry.sql' with { type: 'text' }
import m0011 from './0011_operator_roles.sql' with { type: 'text' }
import m0012 from './0012_blocked_recipients.sql' with { type: 'text' }
import m0013 from './0013_whatsapp.sql' with { type: 'text' }
import m0014 from './0014_hooks.sql' with { type: 'text' }
import m0015 from './0015_workflow_steps.sql' with { type: 'text' }

export const migrationJournal = journal
export const migrationFiles: Record<string, string> = {
  '0000_init': m0000,
  '0001_events_idempotency': m0001,
  '0002_fraud': m0002,
  '0003_fraud_prefix_keys': m0003,
  '0006_messages': m0006,
  '0004_console': m0004,
  '0005_console': m0005,
  '0007_balance_stripes': m0007,
  '0008_key_hit': m0008,
  '0009_endpoint_turns': m0009,
  '0010_key_expiry': m0010,
  '0011_operator_roles': m0011,
  '0012_blocked_recipients': m0012,
  '0013_whatsapp': m0013,
  '0014_hooks': m0014,
  '0015_workflow_steps': m0015,
}
