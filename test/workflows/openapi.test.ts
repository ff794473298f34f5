/**
 * The workflow answers as the OpenAPI document describes them
 * (docs/api.md#workflows): the send's 400s, the status with `steps`, and
 * `/next`'s 200, 404 and 409s, each checked against the served document.
 */
import { expect, test } from 'bun:test'
import { check, resolveRef } from '../kit/json-schema.ts'
import { harnessPerTest, type Harness, type Result } from '../kit/harness.ts'

const start = harnessPerTest({ credits: 5 })

async function documented(h: Harness): Promise<(path: string, method: string, r: Result) => void> {
  const doc = (await (await h.server.http.handle(new Request('http://localhost/api/v1/openapi.json'))).json()) as Record<string, any>
  return (path, method, r) => {
    const res = resolveRef(doc, doc.paths[path][method].responses[String(r.status)])
    expect(res, `${method} ${path} documents ${r.status}`).toBeDefined()
    expect(check(res.content['application/json'].schema, r.json, doc), `${method} ${path} ${r.status} ${JSON.stringify(r.json)}`).toEqual([])
  }
}

test('send, status and next answer as documented', async () => {
  const h = await start()
  const conforms = await documented(h)
  const SEND = '/api/v1/send'
  const STATUS = '/api/v1/verifications/{verification_id}'
  const NEXT = '/api/v1/verifications/{verification_id}/next'
  for (const body of [
    { channel: 'sms', recipient: '+14155550123', workflow: [{ channel: 'sms' }] },
    { recipient: '+14155550123', workflow: [] },
    { recipient: '+14155550123', workflow: [{ channel: 'fax' }] },
    { recipient: '+14155550123', workflow: [{ channel: 'email' }] },
    { recipient: '+14155550123', workflow: [{ channel: 'sms' }, { channel: 'sms' }] },
    { recipient: '+14155550123', workflow: [{ channel: 'sms' }], channel_timeout: 5 },
    { channel: 'sms', recipient: '+14155550123', channel_timeout: 30 },
  ]) {
    const r = await h.send(body)
    expect(r.status).toBe(400)
    conforms(SEND, 'post', r)
  }
  const sent = await h.send({ recipient: '+14155550123', workflow: [{ channel: 'whatsapp' }, { channel: 'sms' }] })
  conforms(SEND, 'post', sent)
  const id = sent.json.verification_id as string
  await h.server.storage.settled()
  const path = `/api/v1/verifications/${id}`
  conforms(STATUS, 'get', await h.call(path, undefined, { method: 'GET', headers: {} }))
  const next = await h.call(`${path}/next`, undefined, { headers: {} })
  expect(next.status).toBe(200)
  conforms(NEXT, 'post', next)
  await h.server.storage.settled()
  conforms(STATUS, 'get', await h.call(path, undefined, { method: 'GET', headers: {} }))
  const none = await h.call(`${path}/next`, undefined, { headers: {} })
  expect(none.status).toBe(409)
  conforms(NEXT, 'post', none)
  const missing = await h.call(`/api/v1/verifications/00000000-0000-4000-8000-000000000000/next`, undefined, { headers: {} })
  expect(missing.status).toBe(404)
  conforms(NEXT, 'post', missing)
  expect((await h.call(`${path}/next`, undefined, { method: 'GET' })).status).toBe(405)
})
