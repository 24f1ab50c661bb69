/**
 * A store whose server takes the connection and closes it (a proxy without a backend, a server
 * going down, a middlebox cutting the link): an outage, STORE_UNAVAILABLE, never an internal error
 * (which would stop every worker of a fleet with exit 70), and no password in any output.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { createServer, type Server } from 'node:net'
import { openVba } from '../../src/index.js'
import { rejectsWithVbaError } from '../helpers/vba-error.js'
import { VBA_BIN } from '../helpers/cli.js'

const test = suite('a store that drops the connection')
let server: Server
let port = 0

test.before(async () => {
  server = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
})
test.after(() => {
  server.close()
})

test('PostgreSQL: the client rejects with STORE_UNAVAILABLE, an outage', async () => {
  const e = await rejectsWithVbaError(openVba({ store: `postgres://reader:s3cret-Pw-17@127.0.0.1:${port}/cases` }))
  assert.is(e.code, 'STORE_UNAVAILABLE')
  assert.ok(e.unavailable && !e.permanent)
  assert.match(e.message, 'closed the connection')
  for (const text of [e.message, JSON.stringify(e.toJSON()), String(e.stack)])
    assert.not.ok(text.includes('s3cret-Pw-17'), text)
})

test('PostgreSQL: vba queue list exits 3 with the code, and no password', async () => {
  // Run asynchronously: the server that drops the connection lives in this process.
  const url = `postgres://reader:s3cret-Pw-17@127.0.0.1:${port}/cases`
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [VBA_BIN, 'queue', 'list', '--store', url], (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr })
    )
  })
  assert.is(r.code, 3, r.stderr)
  assert.match(r.stderr, /^vba: STORE_UNAVAILABLE: /)
  assert.not.match(r.stderr + r.stdout, 's3cret-Pw-17')
})

test.run()
