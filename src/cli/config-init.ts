/**
 * `otpd config init`: writes the commented example config. The file is
 * embedded with a text import, so the compiled binary carries it.
 */
import type { Command } from 'commander'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import exampleText from '../../otp.config.example.toml' with { type: 'text' }
import { example } from './common.ts'

export const EXAMPLE_CONFIG: string = exampleText

export function addConfigInit(config: Command): void {
  example(
    config.command('init').description('write the commented example config (every key at its default) to a file'),
    'otpd config init',
    'otpd config init --file /etc/otpd/otp.config.toml',
    'otpd config init --file - > otp.config.toml',
  )
    .option('--file <path>', "where to write it; '-' prints it", 'otp.config.toml')
    .option('--force', 'overwrite the file if it exists')
    .action((opts: { file: string; force?: boolean }) => {
      if (opts.file === '-') return void process.stdout.write(EXAMPLE_CONFIG)
      const path = resolve(opts.file)
      const dir = dirname(path)
      if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`cannot write ${path}: directory ${dir} does not exist`)
      if (existsSync(path) && !opts.force) throw new Error(`${path} already exists; keeping it (use --force to overwrite it)`)
      // 0600: the file may come to hold server.secret and provider tokens.
      // 'wx' without --force: a file created meanwhile is still not overwritten.
      try {
        writeFileSync(path, EXAMPLE_CONFIG, { mode: 0o600, flag: opts.force ? 'w' : 'wx' })
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        if (code === 'EEXIST') throw new Error(`${path} already exists; keeping it (use --force to overwrite it)`)
        throw new Error(`cannot write ${path}: ${code ?? (err as Error).message}`)
      }
      process.stdout.write(`wrote the example config to ${path}\nEdit it, then check it: otpd config check --config ${path}\n`)
    })
}
