/**
 * Delta chains of the pack reader: git's deepest (4,095 links, `git repack --depth=4095`) read as
 * git reads them, OFS_DELTA and REF_DELTA; a damaged or hostile pack whose chain comes back to
 * one of its objects, or whose delta's base lies before the pack, is OBJECT_CORRUPT at once.
 *
 * Found attacking 2fbb181's reader: it resolved a chain by recursion, inflating each delta before
 * its base, so a chain of 3,000-4,095 links overflowed the stack (READ_ERROR "read error" for a
 * pack git reads), and two REF_DELTAs each other's base (4 MiB of zeros each, 8 KiB of pack) held
 * 4 MiB per link until then (3.9 GB when stopped by a 6 GB ulimit); a base before the pack's start
 * was a READ_ERROR (ERR_OUT_OF_RANGE from a read at a negative position).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { deflateSync } from 'node:zlib'
import { ObjectStoreError, openObjectReader } from '../../src/adapters/git/object-reader.js'
import {
  OBJ_OFS_DELTA,
  OBJ_REF_DELTA,
  appendDelta,
  blobEntry,
  blobId,
  entryHeader,
  ofsDistance,
  writePack,
  type PackEntry
} from '../helpers/pack-bytes.js'
import { tempDir } from '../helpers/fs.js'

const bareRepo = (): string => {
  const dir = tempDir('delta-chains')
  execFileSync('git', ['init', '-q', '--bare', dir])
  return dir
}

/** A chain of `links` deltas over a one-byte blob, each adding a byte: its entries, and the last blob's id and content. */
const chain = (links: number, kind: 'ofs' | 'ref'): { entries: PackEntry[]; id: string; content: Buffer } => {
  let content = Buffer.from('x')
  const entries: PackEntry[] = [blobEntry(content)]
  // Each entry's offset, as writePack places them in order.
  const offsets: number[] = []
  const first = entries[0] as PackEntry
  entries[0] = {
    id: first.id,
    bytes: (at) => {
      offsets[0] = at
      return first.bytes(at)
    }
  }
  for (let k = 1; k <= links; k++) {
    const base = content
    content = Buffer.concat([base, Buffer.from([97 + (k % 26)])])
    const delta = appendDelta(base, content.subarray(base.length))
    const stream = deflateSync(delta)
    const baseId = Buffer.from(blobId(base), 'hex')
    entries.push({
      id: blobId(content),
      bytes: (at) => {
        offsets[k] = at
        return kind === 'ofs'
          ? Buffer.concat([entryHeader(OBJ_OFS_DELTA, delta.length), ofsDistance(at - (offsets[k - 1] ?? 0)), stream])
          : Buffer.concat([entryHeader(OBJ_REF_DELTA, delta.length), baseId, stream])
      }
    })
  }
  return { entries, id: blobId(content), content }
}

/** What reading `id` refuses (planned first when `planned`), or null when it reads. */
const refusal = (gitdir: string, id: string, planned: boolean): ObjectStoreError | null => {
  const reader = openObjectReader(gitdir)
  try {
    if (planned) reader.plan([id])
    reader.read(id)
    return null
  } catch (e) {
    if (e instanceof ObjectStoreError) return e
    throw e
  } finally {
    reader.close()
  }
}

const test = suite('delta chains')

test("a chain of git's deepest, 4,095 links, reads as git reads it: OFS_DELTA and REF_DELTA", () => {
  for (const kind of ['ofs', 'ref'] as const) {
    const gitdir = bareRepo()
    const { entries, id, content } = chain(4095, kind)
    writePack(gitdir, entries)
    const theirs = execFileSync('git', ['cat-file', 'blob', id], { cwd: gitdir, maxBuffer: 1 << 20 })
    assert.ok(theirs.equals(content), `git reads the ${kind} chain`)
    for (const planned of [false, true]) {
      const reader = openObjectReader(gitdir)
      try {
        if (planned) reader.plan([id, entries[2000]?.id ?? ''])
        assert.ok(reader.read(id)?.content.equals(content), `${kind} chain, planned ${planned}`)
        assert.is(reader.read(entries[2000]?.id ?? '')?.content.length, 2001)
      } finally {
        reader.close()
      }
    }
  }
})

// 64 KiB of zeros as a delta's stream: what a link of a looping chain would hold.
const ZEROS = deflateSync(Buffer.alloc(64 << 10))
const A = 'aa'.repeat(20)
const B = 'bb'.repeat(20)

test('two REF_DELTAs each the base of the other are refused as a chain that comes back', () => {
  const gitdir = bareRepo()
  writePack(gitdir, [
    { id: A, bytes: () => Buffer.concat([entryHeader(OBJ_REF_DELTA, 64 << 10), Buffer.from(B, 'hex'), ZEROS]) },
    { id: B, bytes: () => Buffer.concat([entryHeader(OBJ_REF_DELTA, 64 << 10), Buffer.from(A, 'hex'), ZEROS]) }
  ])
  for (const planned of [false, true]) {
    const e = refusal(gitdir, A, planned)
    assert.is(e?.code, 'OBJECT_CORRUPT')
    assert.match(e?.message ?? '', 'a delta chain comes back to one of its objects')
  }
})

test('an OFS_DELTA that is its own base, and one whose base lies before the pack, are OBJECT_CORRUPT', () => {
  for (const [back, why] of [
    [0, 'a delta chain comes back to one of its objects'],
    [13, 'an object offset lies outside its pack'],
    [5000, 'an object offset lies outside its pack']
  ] as const) {
    const gitdir = bareRepo()
    writePack(gitdir, [
      { id: A, bytes: () => Buffer.concat([entryHeader(OBJ_OFS_DELTA, 64 << 10), ofsDistance(back), ZEROS]) }
    ])
    for (const planned of [false, true]) {
      const e = refusal(gitdir, A, planned)
      assert.is(e?.code, 'OBJECT_CORRUPT', `back ${back}`)
      assert.match(e?.message ?? '', why)
    }
  }
})

test('a delta claiming more than a buffer holds is OBJECT_CORRUPT', () => {
  // Found attacking 2fbb181: a claim over 4 GiB was a READ_ERROR (ERR_OUT_OF_RANGE from the pool's buffer).
  const gitdir = bareRepo()
  const base = Buffer.from('x')
  // Source size 1, target size 2^33 (a varint), an insert of one byte.
  const delta = Buffer.from([1, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 0x41])
  const stream = deflateSync(delta)
  writePack(gitdir, [
    blobEntry(base),
    {
      id: A,
      bytes: (at) => Buffer.concat([entryHeader(OBJ_OFS_DELTA, delta.length), ofsDistance(at - 12), stream])
    }
  ])
  const e = refusal(gitdir, A, false)
  assert.is(e?.code, 'OBJECT_CORRUPT')
  assert.match(e?.message ?? '', 'a delta claims 8589934592 bytes')
})

test.run()
