/**
 * Runs an installed otpd as an operator would and checks it end to end:
 * `serve` on a free port, `keys create`, a send to a test recipient and its
 * verify, the version in /metrics' otpd_build_info, then SIGTERM.
 */

export interface ServeCheck {
  /** The command up to the subcommand: [binary] or a wrapper around it. */
  otpd: string[]
  /** Arguments every command takes (--config FILE). */
  common: string[]
  env: Record<string, string>
  cwd: string
  version: string
  metricsToken: string
}

/** Resolves with the serve URL once it prints it, or rejects with its output. */
async function listeningUrl(proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>, timeoutMs: number): Promise<string> {
  let out = ''
  const decoder = new TextDecoder()
  const deadline = setTimeout(() => proc.kill('SIGKILL'), timeoutMs)
  try {
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk, { stream: true })
      const m = /listening on (http:\/\/[0-9.]+:[0-9]+)/.exec(out)
      if (m) return m[1] as string
    }
    throw new Error(`serve exited before listening:\n${out}${await new Response(proc.stderr).text()}`)
  } finally {
    clearTimeout(deadline)
  }
}

/** Throws at the first step that does not answer as documented; returns what it did. */
export async function checkServe(c: ServeCheck): Promise<string> {
  const run = (...args: string[]) => Bun.spawnSync([...c.otpd, ...args, ...c.common], { env: c.env, cwd: c.cwd })
  const server = Bun.spawn([...c.otpd, 'serve', '--listen', '127.0.0.1:0', ...c.common], {
    env: c.env,
    cwd: c.cwd,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  try {
    const url = await listeningUrl(server, 20_000)
    const created = run('keys', 'create', '--name', 'release-check', '--json')
    if (created.exitCode !== 0) throw new Error(`keys create: ${created.stderr}`)
    const key = JSON.parse(created.stdout.toString()).key as string
    const post = async (path: string, body: unknown) => {
      const r = await fetch(url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: r.status, json: (await r.json()) as Record<string, unknown> }
    }
    const sent = await post('/api/v1/send', { channel: 'sms', recipient: '+15550100001' })
    if (sent.status !== 200) throw new Error(`send answered ${sent.status} ${JSON.stringify(sent.json)}`)
    const verified = await post('/api/v1/verify', { verification_id: sent.json.verification_id, code: '123456' })
    if (verified.status !== 200 || verified.json.verified !== true) throw new Error(`verify answered ${verified.status} ${JSON.stringify(verified.json)}`)
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${c.metricsToken}` } })).text()
    const info = `otpd_build_info{version="${c.version}"} 1`
    if (!metrics.includes(info)) throw new Error(`/metrics has no line ${info}`)
    server.kill('SIGTERM')
    const code = await server.exited
    if (code !== 0) throw new Error(`serve exited with ${code} on SIGTERM`)
    return `serve, keys create, send, verify, ${info}, stop`
  } finally {
    server.kill('SIGKILL')
  }
}
