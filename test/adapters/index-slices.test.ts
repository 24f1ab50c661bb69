/**
 * The chunk digests a snapshot index build writes into index.json (src/adapters/git/index-slices.ts
 * chunkDigester: whole chunks hashed by one call each, a chunk split between writes incrementally)
 * are those of the whole file (index-format.ts chunkDigests, which the index's reader checks
 * against), however the file was cut into writes.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import { FILTER_CHUNK, chunkDigests } from '../../src/adapters/git/index-format.js'
import { chunkDigester } from '../../src/adapters/git/index-slices.js'

const test = suite('chunk digests of a file written in pieces')

test('property: the digests of the pieces written in order are those of the whole file', () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 0, maxLength: 5 * FILTER_CHUNK + 100 }),
      fc.array(fc.integer({ min: 0, max: 3 * FILTER_CHUNK }), { maxLength: 12 }),
      (file, cuts) => {
        const digester = chunkDigester()
        let at = 0
        for (const n of cuts) {
          digester.update(file.subarray(at, at + n))
          at = Math.min(file.length, at + n)
        }
        digester.update(file.subarray(at))
        assert.is(digester.end(), chunkDigests(file))
      }
    ),
    fcOptions(300)
  )
})

test.run()
