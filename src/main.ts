#!/usr/bin/env bun
/** The `otpd` command: commander program wiring, nothing else. */
// First, before the rest loads: `serve` may start the process again here (cli/outbound-cap.ts).
import './cli/outbound-cap.ts'
import { Command } from 'commander'
import { accountsCommand } from './cli/accounts.ts'
import { auditCommand } from './cli/audit.ts'
import { backupCommand } from './cli/backup.ts'
import { example, printJson, reportAndExit, withConfig, withJson } from './cli/common.ts'
import { completionCommand } from './cli/completion.ts'
import { configCommand } from './cli/config.ts'
import { dbCommand } from './cli/db.ts'
import { creditsCommand } from './cli/credits.ts'
import { eventsCommand } from './cli/events.ts'
import { fraudCommand } from './cli/fraud.ts'
import { hooksCommand } from './cli/hooks.ts'
import { keysCommand } from './cli/keys.ts'
import { messagesCommand } from './cli/messages.ts'
import { operatorsCommand } from './cli/operators.ts'
import { restoreCommand } from './cli/restore.ts'
import { routingCommand } from './cli/routing.ts'
import { sendTestCommand } from './cli/send-test.ts'
import { serveCommand } from './cli/serve.ts'
import { suggestUnknownCommands } from './cli/suggest.ts'
import { webhooksCommand } from './cli/webhooks.ts'
import { VERSION as RELEASE } from './lib/version.ts'

/** The one version string: `otpd --version` and `otpd version` print the same line. */
const VERSION = `otpd ${RELEASE} (bun ${Bun.version})`

const program = new Command('otpd')
  .description('Self-hosted one-time passwords: send and verify codes by SMS, email, voice and WhatsApp.')
  .version(VERSION, '-V, --version', 'print the version')
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText(
    'after',
    '\nEvery command takes --config FILE (else $OTPD_CONFIG, ./otp.config.toml, /etc/otpd/otp.config.toml),\n' +
      '--env-file FILE and --help. Relative paths in a config file are read from its directory.\n' +
      '\nDocs: /usr/share/doc/otpd/README.md, and by topic in /usr/share/doc/otpd/docs/ (installed by\n' +
      'scripts/install.sh; README.md and docs/ in the repository):\n' +
      '  api.md              the HTTP API: every endpoint, field, status, message and limit\n' +
      '  configuration.md    every config key with its default; OTPD_* environment variables\n' +
      '  install.md          release archives, the container image, compose files, upgrades\n' +
      '  operating.md        install, systemd, every command, reload, logs, metrics, backups\n' +
      '  troubleshooting.md  errors at start and at run time, and their fixes\n' +
      '  delivery.md         SMTP, Twilio, Vonage and webhook providers; receipts\n' +
      '  events.md           webhook events: endpoints, signatures, retries\n' +
      '  fraud-guard.md      the SMS pumping guard: rules, rollout, commands\n' +
      '  integrations.md     identity servers (Supabase, Zitadel, Logto...): otpd as their SMS and email hook\n' +
      '  messages.md         the message a person receives: languages, templates, segments, autofill\n' +
      '  multi-node.md       PostgreSQL, several nodes, moving from SQLite\n' +
      '  console.md          the operator console: enabling it, operators, the audit log\n' +
      '  development.md      working on otpd\n' +
      '  benchmarks.md       speed, and how to measure it\n' +
      '  reliability.md      what is proved under crashes and faults\n',
  )

program.addCommand(serveCommand())
program.addCommand(keysCommand())
program.addCommand(creditsCommand())
program.addCommand(accountsCommand())
program.addCommand(fraudCommand())
program.addCommand(messagesCommand())
program.addCommand(configCommand())
program.addCommand(sendTestCommand())
program.addCommand(routingCommand())
program.addCommand(backupCommand())
program.addCommand(restoreCommand())
program.addCommand(webhooksCommand())
program.addCommand(hooksCommand())
program.addCommand(eventsCommand())
program.addCommand(dbCommand())
program.addCommand(operatorsCommand())
program.addCommand(auditCommand())
program.addCommand(completionCommand(() => program))
program.addCommand(
  example(
    withJson(withConfig(new Command('version').description('print the version (takes --config like every command; it needs none)'))),
    'otpd version --json',
  ).action((opts: { json?: boolean }) => {
    if (opts.json) printJson({ version: RELEASE, bun: Bun.version })
    else process.stdout.write(`${VERSION}\n`)
  }),
)

// Commander's own errors (unknown option, missing argument) in the same shape as every other error, on every command.
const prefixErrors = (cmd: Command): void => {
  cmd.configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'otpd: error: ')) })
  cmd.commands.forEach(prefixErrors)
}
prefixErrors(program)
suggestUnknownCommands(program)

try {
  await program.parseAsync(process.argv)
} catch (err) {
  reportAndExit(err)
}
