/**
 * The snapshot index's trigram filters (src/adapters/git/index-format.ts, index-filters.ts) only
 * ever skip a blob that cannot match: for any bytes and any needle, the exact filter never rules
 * out a blob holding the needle byte for byte, and the case-folded filter never rules out a blob
 * holding it in any ASCII case (as ignore_case matches: lowerAscii of both sides). Both filters come
 * from one pass; the exact one is the filter of version 1 bit for bit. Stored bit-sliced (version
 * 3), every blob's filter is recovered bit for bit, and the candidates a needle's rows leave are
 * exactly the blobs whose own filter holds every trigram of it. A build slices the filters as it
 * derives them (filter-slicer.ts): the same bytes as slicing every filter afterwards.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import {
  STORED,
  filterClasses,
  filterLog,
  needleHashes,
  rowBytes,
  sliceFilters,
  trigramFilters,
  unsliceFilter,
  type BlobRow
} from '../../src/adapters/git/index-format.js'
import { candidatesOf, filterMayContain, type FilterWindow } from '../../src/adapters/git/index-filters.js'
import { filterSlicer } from '../../src/adapters/git/filter-slicer.js'
import { lowerAscii } from '../../src/research/source/common.js'

/** A filter file as the index reads it: a window over its bytes. */
const windowOver = (file: Uint8Array): FilterWindow => ({
  check: () => null,
  bytes: (offset, length) => Buffer.from(file.buffer, file.byteOffset + offset, length)
})

/** Blobs as the index stores them: their rows and both filter files, bit-sliced. */
const indexOf = (blobs: readonly Uint8Array[]) => {
  const logs = blobs.map((b) => filterLog(b.length))
  const filters = blobs.map((b, i) => trigramFilters(b, logs[i] ?? 9))
  const slots = new Map<number, number>()
  const rows = logs.map((log, i): BlobRow => {
    const slot = slots.get(log) ?? 0
    slots.set(log, slot + 1)
    return [blobs[i]?.length ?? 0, STORED, 0, slot, log]
  })
  const { classes } = filterClasses(logs)
  const exact = windowOver(sliceFilters(filters.map((f) => f.exact)))
  const folded = windowOver(sliceFilters(filters.map((f) => f.folded)))
  /** Whether blob `i` may hold the needle with these hashes, as a scan asks (folded: in any case). */
  const may = (i: number, hashes: Uint32Array | null, inAnyCase: boolean): boolean =>
    hashes === null || filterMayContain(rows[i], candidatesOf(classes, hashes, inAnyCase ? folded : exact))
  return { rows, filters, classes, exact, folded, may }
}

/** Whether every trigram of the needle is set in one blob's own filter (the test of version 2). */
const holdsAll = (filter: Uint8Array, hashes: Uint32Array): boolean => {
  const shift = 32 - (31 - Math.clz32(filter.length) + 3)
  return hashes.every((x) => {
    const h = x >>> shift
    return ((filter[h >>> 3] ?? 0) & (1 << (h & 7))) !== 0
  })
}

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
      fc.array(blobBytes, { minLength: 1, maxLength: 12 }),
      fc.nat(),
      fc.nat(),
      fc.integer({ min: 1, max: 24 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 24 }),
      (blobs, which, at, n, mask) => {
        const i = which % blobs.length
        const bytes = blobs[i] as Buffer
        const start = bytes.length === 0 ? 0 : at % bytes.length
        const cut = bytes.subarray(start, start + n)
        const needle = recase(cut, mask)
        const index = indexOf(blobs)
        // The case-folded filter, asked with the lowered needle, as scan asks it for ignore_case.
        assert.ok(lowerAscii(bytes).includes(lowerAscii(needle)))
        assert.ok(index.may(i, needleHashes(lowerAscii(needle)), true))
        // The exact filter with the needle as cut.
        assert.ok(index.may(i, needleHashes(cut), false))
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
      const may = indexOf([bytes]).may(0, needleHashes(lowerAscii(needle)), true)
      if (lowerAscii(bytes).includes(lowerAscii(needle))) assert.ok(may)
      if (!may) ruledOut++
    }),
    fcOptions(400)
  )
  // Not a promise of the format, but a filter that rules nothing out would make the one above hollow.
  assert.ok(ruledOut > 100, `the folded filter ruled out ${ruledOut} of 400 blobs`)
})

filters(
  'the exact filter (WebAssembly) is bit for bit the filter of version 1 (JavaScript); the folded one that of the lowered bytes',
  () => {
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
    // Blobs larger than the kernel's memory so far grow it; a small one after them reads the grown memory.
    for (const size of [70_000, 1_300_000, 5]) {
      const bytes = Buffer.from(Array.from({ length: size }, (_, i) => (i * 7919 + (i >>> 9)) % 251))
      const log = filterLog(size)
      const f = trigramFilters(bytes, log)
      assert.equal(Buffer.from(f.exact), Buffer.from(v1(bytes, log)), `${size} bytes`)
      assert.equal(Buffer.from(f.folded), Buffer.from(v1(lowerAscii(bytes), log)), `${size} bytes, folded`)
    }
  }
)

filters('property: sliced, every filter is recovered bit for bit, and the candidates are those of each filter', () => {
  fc.assert(
    fc.property(
      fc.array(blobBytes, { minLength: 1, maxLength: 30 }),
      fc.array(fc.uint8Array({ minLength: 3, maxLength: 10 }), { minLength: 1, maxLength: 4 }),
      (blobs, needles) => {
        const index = indexOf(blobs)
        index.rows.forEach((r, i) => {
          const c = index.classes.find(([log]) => log === r[4])
          if (c === undefined) throw new Error('a blob of no class')
          const region = index.exact.bytes(c[2], 2 ** c[0] * rowBytes(c[1]))
          assert.equal(
            Buffer.from(unsliceFilter(region, rowBytes(c[1]), r[3], r[4])),
            Buffer.from(index.filters[i]?.exact ?? [])
          )
        })
        for (const raw of needles) {
          const hashes = needleHashes(raw) ?? new Uint32Array()
          index.filters.forEach((f, i) => {
            assert.is(index.may(i, hashes, false), holdsAll(f.exact, hashes))
            assert.is(index.may(i, hashes, true), holdsAll(f.folded, hashes))
          })
        }
      }
    ),
    fcOptions(200)
  )
})

filters(
  'property: the filters a build slices as it derives them are both files as sliced from every filter, byte for byte',
  () => {
    // Blob sizes around the class boundaries (so classes of one to dozens of slots, a last column part-filled).
    const sized = fc.oneof(
      blobBytes,
      fc
        .integer({ min: 1000, max: 70_000 })
        .map((n) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + (i >>> 7)) % 253)))
    )
    fc.assert(
      fc.property(fc.array(sized, { minLength: 0, maxLength: 40 }), (blobs) => {
        const slicer = filterSlicer(1 << 17)
        for (const b of blobs) slicer.add(b, filterLog(b.length))
        const exact: Uint8Array[] = []
        const folded: Uint8Array[] = []
        for (const [e, f] of slicer.regions()) {
          exact.push(Buffer.from(e))
          folded.push(Buffer.from(f))
        }
        const filters = blobs.map((b) => trigramFilters(b, filterLog(b.length)))
        assert.equal(Buffer.concat(exact), Buffer.from(sliceFilters(filters.map((f) => f.exact))))
        assert.equal(Buffer.concat(folded), Buffer.from(sliceFilters(filters.map((f) => f.folded))))
      }),
      fcOptions(60)
    )
    assert.throws(() => filterSlicer(100).add(Buffer.alloc(101), 9), /over 100/)
  }
)

filters.run()
