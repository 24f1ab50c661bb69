/**
 * Removing what interrupted writers left in a case: objects no acknowledged event references
 * (a writer killed between writing its objects and its HEAD), temporary files, and a torn or
 * unacknowledged tail of the log. Under the writer lock, so no append runs meanwhile; refused on a
 * case that does not verify (nothing is ever "repaired" away). Reports everything it removed.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { isError } from '../../events/findings.js'
import { errnoOf } from '../fs-util.js'
import { FailureError, coded } from '../../failures/error.js'
import { LOG_FILE, OBJECTS_DIR, TEMP_PREFIX } from './layout.js'
import { acquireLock, releaseLock } from './lock.js'
import { corrupt } from './handle.js'
import { ensureCaseDir } from './case-dir.js'
import { scanCase } from './scan.js'
import { openRegular } from '../regular-file.js'
import { linkedObjectDirectory, notOwnDirectory } from './objects.js'

/** What `gc` removed from a case. @category cases */
export interface GcReport {
  /** Case-relative paths of the orphan objects removed. */
  readonly removed_objects: readonly string[]
  readonly removed_temp_files: readonly string[]
  /** Bytes after HEAD cut from the log (a crashed writer's unacknowledged tail). */
  readonly cut_tail_bytes: number
  /** Temporary files younger than the minimum age, left for a writer that may still be busy. */
  readonly recent_temp_files: number
}

/** @category cases */
export interface GcOptions {
  /** Temporary files younger than this are kept (default 60 s). */
  readonly minTempAgeMs?: number
  readonly waitMs?: number
}

const HEX2 = /^[0-9a-f]{2}$/
const HEX62 = /^[0-9a-f]{62}$/

export const gcCase = (dir: string, options: GcOptions = {}): Promise<GcReport> =>
  coded('case gc', async () => {
    const root = path.resolve(dir)
    await ensureCaseDir(root)
    const lock = await acquireLock(root, { waitMs: options.waitMs ?? 5000 })
    try {
      const referenced = new Set<string>()
      const scan = await scanCase(root, {
        canonical: false,
        onRef: (ref) => {
          referenced.add(ref.digest)
        }
      })
      const errors = scan.findings.filter(isError)
      if (errors.length > 0 || scan.hash === null || scan.head === null)
        throw new FailureError(corrupt(scan.findings, scan.omittedFindings))
      const removedObjects: string[] = []
      const objects = path.join(root, OBJECTS_DIR, 'sha256')
      const list = async (d: string): Promise<string[]> =>
        fsp.readdir(d).catch((e: unknown) => (errnoOf(e) === 'ENOENT' ? [] : Promise.reject(e)))
      // Never through a link: objects/, objects/sha256 and every shard must be directories of the
      // case itself, or gc would remove files of whatever they point at (another case's objects).
      // All are checked before anything is removed: a refusal leaves the case as it was.
      const linked = await linkedObjectDirectory(root)
      if (linked !== null) throw new FailureError(corrupt([notOwnDirectory(linked)]))
      const shards = (await list(objects)).filter((shard) => HEX2.test(shard)).sort()
      for (const shard of shards) {
        const shardDir = path.join(objects, shard)
        const names = await list(shardDir)
        for (const name of names.sort()) {
          if (!HEX62.test(name) || referenced.has(`sha256:${shard}${name}`)) continue
          await fsp.rm(path.join(shardDir, name), { force: true })
          removedObjects.push(`${OBJECTS_DIR}/sha256/${shard}/${name}`)
        }
        if ((await list(shardDir)).length === 0) await fsp.rmdir(shardDir).catch(() => undefined)
      }
      const minAge = options.minTempAgeMs ?? 60_000
      const removedTemp: string[] = []
      let recent = 0
      for (const name of (await fsp.readdir(root)).sort()) {
        if (!name.startsWith(TEMP_PREFIX)) continue
        const file = path.join(root, name)
        const st = await fsp.lstat(file).catch(() => null)
        if (st === null || !st.isFile()) continue
        if (Date.now() - st.mtimeMs < minAge) {
          recent++
          continue
        }
        await fsp.rm(file, { force: true })
        removedTemp.push(name)
      }
      // The log checked above, opened without following a link (one swapped in since is refused).
      const { fh, size } = await openRegular(path.join(root, LOG_FILE), { shown: LOG_FILE, write: true })
      const cut = size - scan.head.bytes
      try {
        if (cut > 0) {
          await fh.truncate(scan.head.bytes)
          await fh.sync()
        }
      } finally {
        await fh.close()
      }
      return {
        removed_objects: removedObjects,
        removed_temp_files: removedTemp,
        cut_tail_bytes: Math.max(0, cut),
        recent_temp_files: recent
      }
    } finally {
      await releaseLock(lock)
    }
  })
