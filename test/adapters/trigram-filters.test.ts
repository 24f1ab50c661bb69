/**
 * The snapshot index's trigram filters (src/adapters/git/index-format.ts, index-filters.ts) only
 * ever skip a blob that cannot match: for any bytes and any needle, the exact filter never rules
 * out a blob holding the needle byte for byte, and the case-folded filter never rules out a blob
 * holding it in any ASCII case (as ignore_case matches: lowerAscii of both sides). Both filters come
 * from one pass; the exact one is the filter of version 1 bit for bit.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import { STORED, filterLog, needleHashes, trigramFilters, type BlobRow } from '../../src/adapters/git/index-format.js'
import { filterMayContain, type FilterWindow } from '../../src/adapters/git/index-filters.js'
import { lowerAscii } from '../../src/research/source/common.js'

/** One blob's filter as the index reads it: a window over the filter's own bytes. */
const windowOver = (filter: Uint8Array): FilterWindow => ({
  check: () => null,
  bytes: (offset, length) => Buffer.from(filter.buffer, filter.byteOffset + offset, length)
})
const rowOf = (bytes: Uint8Array): BlobRow => [bytes.length, STORED, 0, 0, filterLog(bytes.length)]

/** Bytes with many letters of both cases (so folding matters), some digits, punctuation and high bytes. */
const blobBytes = fc
  .array(
    fc.oneof(
      fc.constantFrom(...'AaBbZzQq_(){}09 \n\r'.split('').map((c) => c.charCodeAt(0))),
      fc.integer({ min: 0, max: 255 })
    ),
    { minLength: 0, maxLength: 3000 }
  )
  .map((a) => Buffer.from(a))
/** Flips the case of ASCII letters where `mask` says so. */
const recase = (b: Buffer, mask: readonly boolean[]): Buffer =>
  Buffer.from(
    b.map((c, i) =>
      mask[i % Math.max(1, mask.length)] === true && /[A-Za-z]/.test(String.fromCharCode(c)) ? c ^ 0x20 : c
    )
  )

const filters = suite('trigram filters')

filters('property: a needle cut from the bytes, in any case, is never ruled out by the folded filter', () => {
  fc.assert(
    fc.property(
      blobBytes,
      fc.nat(),
      fc.integer({ min: 1, max: 24 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 24 }),
      (bytes, at, n, mask) => {
        const start = bytes.length === 0 ? 0 : at % bytes.length
        const cut = bytes.subarray(start, start + n)
        const needle = recase(cut, mask)
        const f = trigramFilters(bytes, filterLog(bytes.length))
        const row = rowOf(bytes)
        // The case-folded filter, asked with the lowered needle, as scan asks it for ignore_case.
        assert.ok(lowerAscii(bytes).includes(lowerAscii(needle)))
        assert.ok(filterMayContain(row, needleHashes(lowerAscii(needle)) ?? new Uint32Array(), windowOver(f.folded)))
        // The exact filter with the needle as cut.
        assert.ok(filterMayContain(row, needleHashes(cut) ?? new Uint32Array(), windowOver(f.exact)))
      }
    ),
    fcOptions(400)
  )
})

filters('property: whatever the needle, a blob that holds it in any case is never ruled out', () => {
  let ruledOut = 0
  fc.assert(
    fc.property(blobBytes, fc.uint8Array({ minLength: 3, maxLength: 8 }), (bytes, raw) => {
      const needle = Buffer.from(raw)
      const f = trigramFilters(bytes, filterLog(bytes.length))
      const may = filterMayContain(
        rowOf(bytes),
        needleHashes(lowerAscii(needle)) ?? new Uint32Array(),
        windowOver(f.folded)
      )
      if (lowerAscii(bytes).includes(lowerAscii(needle))) assert.ok(may)
      if (!may) ruledOut++
    }),
    fcOptions(400)
  )
  // Not a promise of the format, but a filter that rules nothing out would make the one above hollow.
  assert.ok(ruledOut > 100, `the folded filter ruled out ${ruledOut} of 400 blobs`)
})

filters('the exact filter is bit for bit the filter of version 1; the folded one that of the lowered bytes', () => {
  const v1 = (bytes: Uint8Array, log: number): Uint8Array => {
    const f = new Uint8Array(1 << (log - 3))
    let t = ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0)
    for (let i = 2; i < bytes.length; i++) {
      t = ((t << 8) | (bytes[i] ?? 0)) & 0xffffff
      const h = Math.imul(t, 0x9e3779b1) >>> (32 - log)
      f[h >>> 3] = (f[h >>> 3] ?? 0) | (1 << (h & 7))
    }
    return f
  }
  fc.assert(
    fc.property(blobBytes, (bytes) => {
      const log = filterLog(bytes.length)
      const f = trigramFilters(bytes, log)
      assert.equal(Buffer.from(f.exact), Buffer.from(v1(bytes, log)))
      assert.equal(Buffer.from(f.folded), Buffer.from(v1(lowerAscii(bytes), log)))
    }),
    fcOptions(200)
  )
})

filters.run()
