/**
 * Git objects whose zlib streams hold more than their headers claim (a damaged or hostile
 * repository: 64 KiB of zlib inflate to 64 MiB of zeros) are refused as soon as the stream passes
 * the claimed size, in a pack and loose, and objects that are what they claim still read exactly.
 *
 * Found attacking the object reader's cheaper inflate (b4c3c94): a pack object claiming 5 bytes
 * was inflated whole in output chunks of 64 bytes (a stream of 600 MiB of zeros took 2.4 GB of
 * memory and 31 s before "inflates to the wrong size"); a claim of 64 MiB or more, and every loose
 * object, were inflated whole whatever they claimed.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { crc32, deflateSync } from 'node:zlib'
import { ObjectStoreError, openObjectReader } from '../../src/adapters/git/object-reader.js'
import { git } from '../helpers/git-repo.js'
import { tempDir } from '../helpers/fs.js'

const BOMB = deflateSync(Buffer.alloc(64 << 20), { level: 9 })
const sha1 = (b: Buffer): Buffer => createHash('sha1').update(b).digest()

/** A repository whose file `bomb.h` is `claimed` bytes of content, committed, and its blob id. */
const repo = (): { readonly dir: string; readonly gitdir: string; readonly oid: string } => {
  const dir = tempDir('inflate-bounds')
  git(dir, 'init', '-q')
  writeFileSync(path.join(dir, 'bomb.h'), 'tiny\n')
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'x')
  return { dir, gitdir: path.join(dir, '.git'), oid: git(dir, 'rev-parse', 'HEAD:bomb.h') }
}

const looseFile = (gitdir: string, oid: string): string => path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))

/** A pack entry's header: a blob of `size` bytes. */
const entryHeader = (size: number): Buffer => {
  const out = [(3 << 4) | (size & 15)]
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    out[out.length - 1] = (out[out.length - 1] ?? 0) | 0x80
    out.push(rest % 128)
  }
  return Buffer.from(out)
}

/** Replaces the loose blob `oid` with a one-object pack whose entry claims `claimed` bytes and inflates to `stream`. */
const packBomb = (gitdir: string, oid: string, claimed: number, stream: Buffer = BOMB): void => {
  rmSync(looseFile(gitdir, oid))
  const header = entryHeader(claimed)
  const body = Buffer.concat([Buffer.from('PACK'), u32(2), u32(1), header, stream])
  const fanout = Buffer.concat(
    Array.from({ length: 256 }, (_, i) => u32(i >= Number.parseInt(oid.slice(0, 2), 16) ? 1 : 0))
  )
  const idx = Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63]),
    u32(2),
    fanout,
    Buffer.from(oid, 'hex'),
    u32(crc32(Buffer.concat([header, stream]))),
    u32(12),
    sha1(body)
  ])
  const dir = path.join(gitdir, 'objects', 'pack')
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'pack-bomb.pack'), Buffer.concat([body, sha1(body)]))
  writeFileSync(path.join(dir, 'pack-bomb.idx'), Buffer.concat([idx, sha1(idx)]))
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

const refusal = (gitdir: string, oid: string): ObjectStoreError => {
  const reader = openObjectReader(gitdir)
  try {
    reader.read(oid)
  } catch (e) {
    if (e instanceof ObjectStoreError) return e
    throw e
  } finally {
    reader.close()
  }
  throw new Error('the object was read')
}

const test = suite('inflating git objects never goes past the size they claim')

test('a pack object that inflates past its claimed size is refused there', () => {
  const { gitdir, oid } = repo()
  packBomb(gitdir, oid, 5)
  const e = refusal(gitdir, oid)
  assert.is(e.code, 'OBJECT_CORRUPT')
  assert.match(e.message, 'inflates past the size it claims')
})

test('a pack object claiming 64 MiB or more (inflated in chunks) is refused past its claim too', () => {
  const { gitdir, oid } = repo()
  // 80 MiB of zeros where 64 MiB are claimed: the stream is cut at 64 MiB and a byte.
  packBomb(gitdir, oid, 64 << 20, deflateSync(Buffer.alloc(80 << 20), { level: 9 }))
  const e = refusal(gitdir, oid)
  assert.is(e.code, 'OBJECT_CORRUPT')
  assert.match(e.message, 'inflates past the size it claims')
})

test('a pack object whose zlib header is not that of deflate data without a preset dictionary is refused', () => {
  // The reader inflates the deflate data after the header itself (no Adler-32: the object's id is
  // checked): the header is checked as zlib checks it.
  const stream = deflateSync(Buffer.from('tiny\n'))
  /** `stream` with its header's CMF and FLG bytes replaced, the check bits of FLG made right. */
  const withHeader = (cmf: number, flags: number): Buffer => {
    const flg = flags & 0xe0
    return Buffer.concat([Buffer.from([cmf, flg + ((31 - ((cmf * 256 + flg) % 31)) % 31)]), stream.subarray(2)])
  }
  const cases: Record<string, Buffer> = {
    'a preset dictionary': withHeader(0x78, 0x20 | (stream[1] ?? 0)),
    'compression method 9': withHeader(0x79, stream[1] ?? 0),
    'a window of 64 KiB': withHeader(0x88, stream[1] ?? 0),
    'wrong check bits': Buffer.concat([Buffer.from([0x78, ((stream[1] ?? 0) + 1) & 0xff]), stream.subarray(2)])
  }
  for (const [what, bytes] of Object.entries(cases)) {
    const { gitdir, oid } = repo()
    packBomb(gitdir, oid, 5, bytes)
    const e = refusal(gitdir, oid)
    assert.is(e.code, 'OBJECT_CORRUPT', what)
    assert.match(e.message, 'does not inflate', what)
  }
  // The same stream with its own header reads.
  const { gitdir, oid } = repo()
  packBomb(gitdir, oid, 5, stream)
  const reader = openObjectReader(gitdir)
  try {
    assert.equal(reader.read(oid)?.content.toString(), 'tiny\n')
  } finally {
    reader.close()
  }
})

test('a loose object that inflates past the size its header gives is refused there', () => {
  const { gitdir, oid } = repo()
  // "blob 5\0" and then 64 MiB of zeros, in one stream.
  const stream = deflateSync(Buffer.concat([Buffer.from('blob 5\0'), Buffer.alloc(64 << 20)]), { level: 9 })
  writeFileSync(looseFile(gitdir, oid), stream)
  const e = refusal(gitdir, oid)
  assert.is(e.code, 'OBJECT_CORRUPT')
  assert.match(e.message, 'inflates past the size its header gives')
})

test('loose objects of every size and compression read exactly, as git wrote them', () => {
  const { dir, gitdir } = repo()
  // Dynamic Huffman blocks (varied text), stored blocks (level 0), empty and large objects.
  let seed = 7
  const text = (n: number): string => {
    let s = ''
    while (s.length < n) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      s += `line ${seed % 9973} ${String.fromCharCode(97 + (seed % 26))}${seed.toString(36)}\n`
    }
    return s.slice(0, n)
  }
  const files: Record<string, string> = { 'empty.h': '', 'one.h': 'x', 'varied.h': text(300_000), 'small.h': text(90) }
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content)
  git(dir, '-c', 'core.compression=0', 'add', 'small.h')
  git(dir, 'add', '-A')
  const reader = openObjectReader(gitdir)
  try {
    for (const [name, content] of Object.entries(files)) {
      const oid = git(dir, 'hash-object', name)
      assert.equal(reader.read(oid)?.content.toString('utf8'), content, name)
    }
  } finally {
    reader.close()
  }
})

test.run()
