/**
 * The shared client-side time limit of streamed queries (src/adapters/db/deadlines.ts): every
 * query not stopped expires, one stopped in time never does, the timer re-arms for later queries,
 * and an armed timer does not keep a process alive.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Deadlines } from '../../src/adapters/db/deadlines.js'

const s = suite('deadlines')

s('queries not stopped expire, stopped ones never; later ones re-arm the timer', async () => {
  // The deadlines' timer is unreferenced (a running query's socket keeps a process alive); here
  // nothing else would.
  const alive = setInterval(() => undefined, 1000)
  const d = new Deadlines(20)
  const expired: string[] = []
  const waitFor = (name: string): Promise<void> =>
    new Promise((resolve) => {
      d.start(() => {
        expired.push(name)
        resolve()
      })
    })
  const stop = d.start(() => expired.push('stopped'))
  const first = waitFor('first')
  stop()
  await first
  await waitFor('second')
  await Promise.all([waitFor('third'), waitFor('fourth')])
  clearInterval(alive)
  assert.equal(expired, ['first', 'second', 'third', 'fourth'])
})

s('an armed deadline does not keep the process alive', () => {
  const module = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src/adapters/db/deadlines.js')
  const script = `const { Deadlines } = await import(${JSON.stringify(module)})
new Deadlines(600000).start(() => console.log('expired'))
console.log('armed')`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 })
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stdout, 'armed\n')
})

s.run()
