/**
 * scripts/lib/mariadb-instance: a port picked free but taken before the server binds it (another
 * process got there first) is not a failed start: the server is started again on another port.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import * as path from 'node:path'
import { startMariaDb } from '../../scripts/lib/mariadb-instance.js'
import { tempDir } from '../helpers/fs.js'

const test = suite('a private MariaDB on a free port')

const held: Server[] = []
test.after(async () => {
  for (const s of held) await new Promise((r) => s.close(r))
})

/** Takes `port` on 127.0.0.1 (listening), as another process could between the pick and the bind. */
const take = (port: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(port, '127.0.0.1', () => {
      held.push(s)
      resolve()
    })
  })

test('the first port picked is taken just before the server starts: it starts on the next one and answers', async () => {
  const dir = path.join(tempDir('maria-port'), 'server')
  const tried: number[] = []
  const m = await startMariaDb({
    dir,
    beforeLaunch: async (port) => {
      tried.push(port)
      if (tried.length === 1) await take(port)
    }
  })
  try {
    assert.is(tried.length, 2, `ports tried: ${tried.join(', ')}`)
    assert.is(m.port, tried[1])
    assert.is.not(m.port, tried[0])
    assert.is(m.sql('SELECT @@port').trim(), String(m.port))
    assert.match(readFileSync(path.join(dir, 'err.log'), 'utf8'), /Bind on TCP\/IP port|Address already in use/)
  } finally {
    await m.stop()
  }
})

test('a port given by the caller that is taken is refused, not replaced', async () => {
  const blocker = createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()))
  held.push(blocker)
  const port = (blocker.address() as { port: number }).port
  const err = await startMariaDb({ dir: path.join(tempDir('maria-given'), 'server'), port }).then(
    () => null,
    (e: Error) => e
  )
  assert.match(err?.message ?? '', `port ${port} is already in use`)
})

test.run()
