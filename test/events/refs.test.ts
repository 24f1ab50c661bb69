import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { collectRefs, objectPath } from '../../src/events/refs.js'

const refs = suite('collectRefs')
const d = `sha256:${'ab'.repeat(32)}`

refs('finds references at any depth with JSON pointers', () => {
  const found = collectRefs({
    a: { digest: d, size: 3 },
    list: [{ x: 1 }, { nested: { digest: d, size: 3, media_type: 'text/plain' } }],
    'we/ird~': { digest: d, size: 3 }
  })
  assert.equal(
    found.refs.map((r) => r.pointer),
    ['/a', '/list/1/nested', '/we~1ird~0']
  )
  assert.equal(found.invalid, [])
})

refs('reports malformed digests and sizes instead of resolving them', () => {
  const found = collectRefs({
    a: { digest: 'sha256:../../etc/passwd', size: 1 },
    b: { digest: '/etc/passwd', size: 1 },
    c: { digest: d, size: -1 },
    e: { digest: d }
  })
  assert.equal(found.refs, [])
  assert.equal(
    found.invalid.map((i) => i.pointer),
    ['/a', '/b', '/c', '/e']
  )
})

refs('objectPath shards by the first two hex digits and refuses anything else', () => {
  assert.is(objectPath(d), `objects/sha256/ab/${'ab'.repeat(31)}`)
  assert.throws(() => objectPath('sha256:../x'))
})

refs.run()
