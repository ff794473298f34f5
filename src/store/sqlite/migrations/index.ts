/**
 * The migrations, embedded: text imports put every SQL file inside the compiled
 * binary, so `otpd` runs from any directory with nothing beside it. Add a line
 * here for each file drizzle-kit generates (a test checks the journal matches).
 */
import journal from './meta/_journal.json'
import m0000 from './0000_init.sql' with { type: 'text' }
import m0001 from './0001_key_hit_seq.sql' with { type: 'text' }
import m0002 from './0002_verification_seq.sql' with { type: 'text' }
import m0003 from './0003_delivery_state.sql' with { type: 'text' }
import m0004 from './0004_settings.sql' with { type: 'text' }
import m0005 from './0005_events.sql' with { type: 'text' }
import m0006 from './0006_idempotency.sql' with { type: 'text' }
import m0007 from './0007_fraud.sql' with { type: 'text' }
import m0008 from './0008_events_verification_seq.sql' with { type: 'text' }
import m0009 from './0009_event_ids.sql' with { type: 'text' }
import m0010 from './0010_fraud_prefix_keys.sql' with { type: 'text' }
import m0013 from './0013_messages.sql' with { type: 'text' }
import m0011 from './0011_console.sql' with { type: 'text' }
import m0012 from './0012_console.sql' with { type: 'text' }
import m0014 from './0014_endpoint_turns.sql' with { type: 'text' }
import m0015 from './0015_key_expiry.sql' with { type: 'text' }
import m0016 from './0016_operator_roles.sql' with { type: 'text' }
import m0017 from './0017_blocked_recipients.sql' with { type: 'text' }
import m0018 from './0018_whatsapp.sql' with { type: 'text' }
import m0019 from './0019_hooks.sql' with { type: 'text' }
import m0020 from './0020_workflow_steps.sql' with { type: 'text' }

export const migrationJournal = journal
export const migrationFiles: Record<string, string> = {
  '0000_init': m0000,
  '0001_key_hit_seq': m0001,
  '0002_verification_seq': m0002,
  '0003_delivery_state': m0003,
  '0004_settings': m0004,
  '0005_events': m0005,
  '0006_idempotency': m0006,
  '0007_fraud': m0007,
  '0008_events_verification_seq': m0008,
  '0009_event_ids': m0009,
  '0010_fraud_prefix_keys': m0010,
  '0013_messages': m0013,
  '0011_console': m0011,
  '0012_console': m0012,
  '0014_endpoint_turns': m0014,
  '0015_key_expiry': m0015,
  '0016_operator_roles': m0016,
  '0017_blocked_recipients': m0017,
  '0018_whatsapp': m0018,
  '0019_hooks': m0019,
  '0020_workflow_steps': m0020,
}
