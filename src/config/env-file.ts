/**
 * `--env-file FILE`: the `KEY=value` file systemd's EnvironmentFile= reads, so
 * an operator command sees the variables the service sees. Blank lines and
 * lines starting with `#` or `;` are skipped; a value may be quoted with
 * single or double quotes (double quotes allow \" and \\); `-` reads stdin.
 */
import { readFileSync } from 'node:fs'
import { accessMessage, isAccessError } from '../lib/fs-errors.ts'

export function parseEnvFile(text: string, file = 'env file'): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const eq = line.indexOf('=')
    const key = eq < 0 ? '' : line.slice(0, eq).trim()
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`${file} line ${i + 1} is not KEY=value`)
    let value = line.slice(eq + 1).trim()
    if (value.length >= 2 && value[0] === '"' && value.endsWith('"')) value = value.slice(1, -1).replace(/\\(["\\])/g, '$1')
    else if (value.length >= 2 && value[0] === "'" && value.endsWith("'")) value = value.slice(1, -1)
    out[key] = value
  }
  return out
}

export function readEnvFile(file: string): Record<string, string> {
  let text: string
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8')
  } catch (err) {
    if (isAccessError(err) && file !== '-') throw new Error(accessMessage('read the env file', file, err, 'to read it'))
    throw new Error(`cannot read env file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`)
  }
  return parseEnvFile(text, file === '-' ? 'the env file on stdin' : file)
}
