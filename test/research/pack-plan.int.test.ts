/**
 * The pack reader's planned reads (ObjectReader.plan, as a snapshot index build reads every blob)
 * and its reused buffers (buffer-pool.ts), against git on a generated repository with delta chains,
 * packed with OFS_DELTA and with REF_DELTA bases: every blob read after a plan has git's bytes,
 * with any cache budget; an object handed out by `read` keeps its bytes while thousands of later
 * objects reuse the pool's buffers; a plan that names objects never read changes no bytes.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import * as path from 'node:path'
import { openObjectReader } from '../../src/adapters/git/object-reader.js'
import { generateRepo } from '../../bench/generated-repo.js'
import { tempDir } from '../helpers/fs.js'

const genDir = path.join(tempDir('plan-gen'), 'core.git')
generateRepo(genDir, 200)
const refDir = path.join(tempDir('plan-ref'), 'core.git')
execFileSync('git', ['clone', '-q', '--bare', '--no-local', genDir, refDir])
execFileSync('git', ['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-f', '-q', '--depth=50'], {
  cwd: refDir
})

/** Every blob of the store as git has it, in the order cat-file lists them. */
const blobs = (dir: string): Map<string, Buffer> => {
  const out = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: dir, maxBuffer: 1 << 30 })
  const found = new Map<string, Buffer>()
  let at = 0
  while (at < out.length) {
    const nl = out.indexOf(10, at)
    const [oid, type, size] = out.toString('latin1', at, nl).split(' ')
    const n = Number(size)
    if (type === 'blob') found.set(oid ?? '', Buffer.from(out.subarray(nl + 1, nl + 1 + n)))
    at = nl + 1 + n + 1
  }
  return found
}

/** How many of the store's objects are deltas (git verify-pack). */
const deltas = (dir: string): number => {
  const packDir = path.join(dir, 'objects', 'pack')
  const pack = execFileSync('ls', [packDir], { encoding: 'utf8' })
    .split('\n')
    .find((f) => f.endsWith('.pack'))
  const v = execFileSync('git', ['verify-pack', '-v', path.join(packDir, pack ?? '')], {
    encoding: 'utf8',
    maxBuffer: 1 << 28
  })
  return v.split('\n').filter((l) => /^[0-9a-f]{40} blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length
}

const plan = suite('planned reads')

plan('every blob read after a plan has git bytes, in listing and reversed order, with any cache budget', () => {
  for (const dir of [genDir, refDir]) {
    const expected = blobs(dir)
    assert.ok(expected.size > 100, `${dir} has blobs`)
    assert.ok(deltas(dir) > 50, `${dir} stores blobs as deltas`)
    const oids = [...expected.keys()]
    for (const order of [oids, [...oids].reverse()])
      for (const cacheBytes of [64 << 20, 1 << 20, 0]) {
        const r = openObjectReader(dir, { cacheBytes })
        r.plan(order)
        for (const oid of order) {
          const got = r.readUnchecked(oid)
          assert.ok(got !== null, `${oid} found`)
          assert.is(got.type, 'blob')
          assert.ok(got.content.equals(expected.get(oid) ?? Buffer.alloc(0)), `${oid} has git's bytes`)
        }
        // The plan is spent: the same objects read again, unplanned, are still exact.
        for (const oid of order.slice(0, 50))
          assert.ok(r.read(oid)?.content.equals(expected.get(oid) ?? Buffer.alloc(0)))
        r.close()
      }
  }
})

plan('an object handed out by read keeps its bytes while later reads reuse the buffers', () => {
  const expected = blobs(genDir)
  const oids = [...expected.keys()]
  const r = openObjectReader(genDir)
  r.plan(oids)
  const kept = oids.filter((_, i) => i % 7 === 0).map((oid) => [oid, r.read(oid)] as const)
  for (const oid of oids) r.readUnchecked(oid)
  for (const [oid, o] of kept) assert.ok(o?.content.equals(expected.get(oid) ?? Buffer.alloc(0)), `${oid} intact`)
  r.close()
})

plan('a plan naming objects that are never read, or ids that are not there, changes no bytes', () => {
  const expected = blobs(refDir)
  const oids = [...expected.keys()]
  const r = openObjectReader(refDir, { cacheBytes: 4 << 20 })
  r.plan([...oids, ...oids, 'f'.repeat(40), 'not an id'])
  for (const oid of oids.slice(0, oids.length / 2))
    assert.ok(r.readUnchecked(oid)?.content.equals(expected.get(oid) ?? Buffer.alloc(0)), `${oid} exact`)
  assert.is(r.readUnchecked('f'.repeat(40)), null)
  for (const oid of oids) assert.ok(r.read(oid)?.content.equals(expected.get(oid) ?? Buffer.alloc(0)), `${oid} exact`)
  r.close()
})

plan.run()
