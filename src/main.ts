#!/usr/bin/env bun
/** The `otpd` command: commander program wiring, nothing else. */
import { Command } from 'commander'
import pkg from '../package.json' with { type: 'json' }
import { accountsCommand } from './cli/accounts.ts'
import { backupCommand } from './cli/backup.ts'
import { example, printJson, reportAndExit, withConfig, withJson } from './cli/common.ts'
import { configCommand } from './cli/config.ts'
import { dbCommand } from './cli/db.ts'
import { creditsCommand } from './cli/credits.ts'
import { eventsCommand } from './cli/events.ts'
import { fraudCommand } from './cli/fraud.ts'
import { keysCommand } from './cli/keys.ts'
import { sendTestCommand } from './cli/send-test.ts'
import { serveCommand } from './cli/serve.ts'
import { webhooksCommand } from './cli/webhooks.ts'

/** The one version string: `otpd --version` and `otpd version` print the same line. */
const VERSION = `otpd ${pkg.version} (bun ${Bun.version})`

const program = new Command('otpd')
  .description('Self-hosted one-time passwords: send and verify codes by SMS, email and voice.')
  .version(VERSION, '-V, --version', 'print the version')
  .showHelpAfterError('(run with --help for usage)')
  .addHelpText(
    'after',
    '\nEvery command takes --config FILE (else $OTPD_CONFIG, ./otp.config.toml, /etc/otpd/otp.config.toml),\n' +
      '--env-file FILE and --help.\n' +
      'Docs: /usr/share/doc/otpd/README.md (installed by scripts/install.sh)\n',
  )

program.addCommand(serveCommand())
program.addCommand(keysCommand())
program.addCommand(creditsCommand())
program.addCommand(accountsCommand())
program.addCommand(fraudCommand())
program.addCommand(configCommand())
program.addCommand(sendTestCommand())
program.addCommand(backupCommand())
program.addCommand(webhooksCommand())
program.addCommand(eventsCommand())
program.addCommand(dbCommand())
program.addCommand(
  example(
    withJson(withConfig(new Command('version').description('print the version (takes --config like every command; it needs none)'))),
    'otpd version --json',
  ).action((opts: { json?: boolean }) => {
    if (opts.json) printJson({ version: pkg.version, bun: Bun.version })
    else process.stdout.write(`${VERSION}\n`)
  }),
)

// Commander's own errors (unknown option, missing argument) in the same shape as every other error, on every command.
const prefixErrors = (cmd: Command): void => {
  cmd.configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'otpd: error: ')) })
  cmd.commands.forEach(prefixErrors)
}
prefixErrors(program)

try {
  await program.parseAsync(process.argv)
} catch (err) {
  reportAndExit(err)
}
