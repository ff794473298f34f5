/** `otpd operators ...`: the people who may sign in to the console (docs/console.md#the-first-operator). */
import { Command, Option } from 'commander'
import { checkRole, OPERATOR_ROLES, type OperatorView } from '../otp/operators.ts'
import { formatTime, isoTime, operatorOption, initOption, printJson, printTable, subcommand, withCore, type CommonOptions } from './common.ts'

function operatorJson(o: OperatorView) {
  return { id: o.id, name: o.name, role: o.role, status: o.status, created_at: isoTime(o.createdAt), password_changed_at: isoTime(o.passwordChangedAt) }
}

/** The password on stdin: one line, its line ending dropped. */
async function passwordFromStdin(): Promise<string> {
  const text = (await Bun.stdin.text()).replace(/\r?\n$/, '')
  if (/[\r\n]/.test(text)) throw new Error('--password-stdin reads one line: the input has several')
  return text
}

/** `--role`: what the operator may do in the console (docs/console.md#roles). */
const roleOption = (what: string) => new Option('--role <role>', what).choices(OPERATOR_ROLES)

const ONCE = 'Give it to the operator now: otpd keeps only an argon2id hash and cannot show it again.\n'

export function operatorsCommand(): Command {
  const operators = new Command('operators').description('manage the operators who may sign in to the console')
  defineAdd(operators)
  defineList(operators)
  defineDisable(operators)
  defineEnable(operators)
  defineSet(operators)
  defineResetPassword(operators)
  return operators
}

function defineAdd(operators: Command): void {
  subcommand(
    operators,
    'add <name>',
    'add an operator; a generated password is printed once, or --password-stdin reads one',
    'otpd operators add alice',
    'printf \'%s\' "$PASSWORD" | otpd operators add bob --password-stdin',
    'otpd operators add carol --role viewer',
  )
    .option('--password-stdin', `read the password (at least 12 characters) from stdin instead of generating one`)
    .addOption(roleOption('admin (the default) may change anything; viewer reads only').default('admin'))
    .addOption(operatorOption())
    .addOption(initOption())
    .action((name: string, opts: CommonOptions & { passwordStdin?: boolean; role: string }) =>
      withCore(opts, async ({ operators }) => {
        const given = opts.passwordStdin ? await passwordFromStdin() : undefined
        const r = await operators.add(name, given, checkRole(opts.role))
        if (opts.json) return printJson({ ...operatorJson(r.operator), ...(r.password === undefined ? {} : { password: r.password }) })
        if (r.password === undefined) return void process.stdout.write(`added operator '${r.operator.name}'\n`)
        process.stdout.write(`${r.password}\n\nAdded operator '${r.operator.name}' with the generated password above.\n${ONCE}`)
      }),
    )
}

function defineList(operators: Command): void {
  subcommand(operators, 'list', 'list operators (never their passwords)', 'otpd operators list').action((opts: CommonOptions) =>
    withCore(
      opts,
      async ({ operators }) => {
        const rows = await operators.list()
        if (opts.json) return printJson(rows.map(operatorJson))
        printTable(
          ['ID', 'NAME', 'ROLE', 'STATUS', 'CREATED', 'PASSWORD CHANGED'],
          rows.map((o) => [o.id, o.name, o.role, o.status, formatTime(o.createdAt), formatTime(o.passwordChangedAt)]),
        )
      },
      { readOnly: true },
    ),
  )
}

function defineDisable(operators: Command): void {
  subcommand(operators, 'disable <name>', 'refuse the operator sign-in from now on, and end every session it has', 'otpd operators disable alice')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((name: string, opts: CommonOptions) =>
      withCore(opts, async ({ operators }) => {
        const r = await operators.disable(name)
        if (opts.json) return printJson({ ...operatorJson(r.operator), sessions_ended: r.sessionsEnded })
        process.stdout.write(`operator '${r.operator.name}' is disabled; ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended\n`)
      }),
    )
}

function defineEnable(operators: Command): void {
  subcommand(operators, 'enable <name>', 'let a disabled operator sign in again', 'otpd operators enable alice')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((name: string, opts: CommonOptions) =>
      withCore(opts, async ({ operators }) => {
        const o = await operators.enable(name)
        if (opts.json) return printJson(operatorJson(o))
        process.stdout.write(`operator '${o.name}' may sign in again\n`)
      }),
    )
}

function defineSet(operators: Command): void {
  subcommand(operators, 'set <name>', "change an operator's role (its sessions take it at their next request)", 'otpd operators set carol --role admin')
    .addOption(roleOption('admin may change anything; viewer reads only').makeOptionMandatory())
    .addOption(operatorOption())
    .action((name: string, opts: CommonOptions & { role: string }) =>
      withCore(opts, async ({ operators }) => {
        const o = await operators.setRole(name, opts.role)
        if (opts.json) return printJson(operatorJson(o))
        process.stdout.write(`operator '${o.name}' has the ${o.role} role\n`)
      }),
    )
}

function defineResetPassword(operators: Command): void {
  subcommand(
    operators,
    'reset-password <name>',
    'give the operator a new password (generated and printed once, or read with --password-stdin) and end every session it has',
    'otpd operators reset-password alice',
  )
    .option('--password-stdin', 'read the new password (at least 12 characters) from stdin instead of generating one')
    .addOption(operatorOption())
    .addOption(initOption())
    .action((name: string, opts: CommonOptions & { passwordStdin?: boolean }) =>
      withCore(opts, async ({ operators }) => {
        const given = opts.passwordStdin ? await passwordFromStdin() : undefined
        const r = await operators.resetPassword(name, given)
        if (opts.json)
          return printJson({ ...operatorJson(r.operator), sessions_ended: r.sessionsEnded, ...(r.password === undefined ? {} : { password: r.password }) })
        const ended = `${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended`
        if (r.password === undefined) return void process.stdout.write(`operator '${r.operator.name}' has a new password; ${ended}\n`)
        process.stdout.write(`${r.password}\n\nNew password for operator '${r.operator.name}' above; ${ended}.\n${ONCE}`)
      }),
    )
}
