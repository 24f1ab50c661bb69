/** Content-addressed objects: objects/sha256/ab/cdef… holding exactly the bytes they are named by. */
import { promises as fsp, type Stats } from 'node:fs'
import * as path from 'node:path'
import { DIGEST_PATTERN, sha256Digest } from '../../events/canonical.js'
import type { ObjectRef } from '../../events/codecs.js'
import { objectPath } from '../../events/refs.js'
import { errnoOf, fsyncDir, tempName, writeNewSynced } from '../fs-util.js'
import { fail, coded } from '../../failures/error.js'
import { isFileRefusal, readRegular } from '../regular-file.js'
import { OBJECTS_DIR, TEMP_PREFIX } from './layout.js'
import { optional } from '../../optional.js'
import { finding, type Finding } from '../../events/findings.js'

/** The lstat of `file`, or null when there is none. */
const lstatOrNull = (file: string): Promise<Stats | null> =>
  fsp.lstat(file).catch((e: unknown) => (errnoOf(e) === 'ENOENT' ? null : Promise.reject(e)))

/** Whether the case-relative `rel` is absent or a directory of the case itself (never a link). */
export const isOwnDirectory = async (dir: string, rel: string): Promise<boolean> => {
  const st = await lstatOrNull(path.join(dir, rel))
  return st === null || st.isDirectory()
}

/**
 * The first of `objects/`, `objects/sha256` and its shards that is not a directory of the case
 * itself (a link to another case's objects, say), or null: nothing reads, writes or removes
 * objects through it (gc, export).
 */
export const linkedObjectDirectory = async (dir: string): Promise<string | null> => {
  for (const rel of [OBJECTS_DIR, `${OBJECTS_DIR}/sha256`]) if (!(await isOwnDirectory(dir, rel))) return rel
  const shards = await fsp
    .readdir(path.join(dir, OBJECTS_DIR, 'sha256'))
    .catch((e: unknown) => (errnoOf(e) === 'ENOENT' ? [] : Promise.reject(e)))
  for (const shard of shards.sort()) {
    const rel = `${OBJECTS_DIR}/sha256/${shard}`
    if (!(await isOwnDirectory(dir, rel))) return rel
  }
  return null
}

/** A FOREIGN_FILE finding for `rel`, which is not a directory of the case (see linkedObjectDirectory). */
export const notOwnDirectory = (rel: string): Finding =>
  finding('FOREIGN_FILE', `${rel} is not a directory of the case (a link or another file)`, { path: rel })

/** Fails with CASE_CORRUPT unless `rel` is absent or a directory of the case: no object is written through a link. */
const ownDirectory = async (dir: string, rel: string): Promise<void> => {
  if (!(await isOwnDirectory(dir, rel)))
    fail(
      'CASE_CORRUPT',
      `${rel} is not a directory of the case (a link or another file): no object is written through it`,
      {
        path: rel
      }
    )
}

/** The reference an object would have (pure; no file is written). */
export const objectRefOf = (bytes: Uint8Array, mediaType?: string): ObjectRef => ({
  digest: sha256Digest(bytes),
  size: bytes.byteLength,
  ...optional('media_type', mediaType)
})

/**
 * Writes one object durably unless an object of that digest and size is already there. Returns
 * the file when this call created it (a caller whose command fails later removes it again).
 */
export const writeObject = async (
  dir: string,
  bytes: Uint8Array
): Promise<{ ref: ObjectRef; created: string | null }> => {
  const ref = objectRefOf(bytes)
  const rel = objectPath(ref.digest)
  const target = path.join(dir, rel)
  // Never through a link: objects/, objects/sha256 and the shard are the case's own directories,
  // and an object already there is a regular file (a link of the right size is not the object).
  await ownDirectory(dir, OBJECTS_DIR)
  await ownDirectory(dir, path.posix.dirname(path.posix.dirname(rel)))
  await ownDirectory(dir, path.posix.dirname(rel))
  const st = await lstatOrNull(target)
  if (st !== null) {
    if (!st.isFile())
      fail('CASE_CORRUPT', `${rel} is not a regular file (a link or another file)`, { digest: ref.digest, path: rel })
    if (st.size !== ref.size)
      fail('CASE_CORRUPT', `object ${ref.digest} on disk has the wrong size`, { digest: ref.digest })
    return { ref, created: null }
  }
  const tmp = path.join(dir, tempName(`${TEMP_PREFIX}obj-`))
  await writeNewSynced(tmp, bytes, 0o444)
  try {
    const shard = path.dirname(target)
    let created = false
    try {
      await fsp.mkdir(shard)
      created = true
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw e
    }
    if (created) await fsyncDir(path.dirname(shard))
    else await ownDirectory(dir, path.posix.dirname(rel))
    await fsp.rename(tmp, target)
    await fsyncDir(shard)
  } catch (e) {
    await fsp.rm(tmp, { force: true })
    throw e
  }
  return { ref, created: target }
}

/** Reads an object and checks it against its reference (OBJECT_MISSING / OBJECT_CORRUPT). */
export const readObject = (dir: string, ref: { readonly digest: string; readonly size: number }): Promise<Buffer> =>
  coded('read object', async () => {
    if (!DIGEST_PATTERN.test(ref.digest))
      return fail('OBJECT_REF_INVALID', 'object reference is not sha256:<64 lowercase hex>')
    let bytes: Buffer
    try {
      // Never more than the reference's size (+1 to see a longer file), never through a link.
      bytes = await readRegular(path.join(dir, objectPath(ref.digest)), {
        maxBytes: ref.size + 1,
        shown: objectPath(ref.digest)
      })
    } catch (e) {
      if (errnoOf(e) === 'ENOENT')
        return fail('OBJECT_MISSING', `object ${ref.digest} is missing`, { digest: ref.digest })
      if (isFileRefusal(e))
        return fail('OBJECT_CORRUPT', `object ${ref.digest} is not a regular file of its size (${e.failure.code})`, {
          digest: ref.digest
        })
      throw e
    }
    if (bytes.length !== ref.size || sha256Digest(bytes) !== ref.digest) {
      return fail('OBJECT_CORRUPT', `object ${ref.digest} does not match its digest or size`, { digest: ref.digest })
    }
    return bytes
  })
