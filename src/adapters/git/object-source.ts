/**
 * Git objects by id for a snapshot, from one of two readers: the small pack reader
 * (object-reader.ts, the default) or isomorphic-git, the reference it is tested against.
 */
import type * as fs from 'node:fs'
import { objectStoreFs } from './object-fs.js'
import { openObjectReader, type ObjectReader, type ObjectType } from './object-reader.js'

/** Reads git objects by id; null when the object is not in the store. */
export interface Objects {
  readonly read: (oid: string) => Promise<{ type: ObjectType; content: Buffer } | null>
  readonly sync?: ObjectReader
  readonly close: () => void
}

/** The pack reader (object-reader.ts), opened on first use. */
export const packObjects = (gitdir: string, cacheBytes: number): Objects => {
  let reader: ObjectReader | null = null
  const open = (): ObjectReader => (reader ??= openObjectReader(gitdir, { cacheBytes }))
  return {
    read: async (oid) => open().read(oid),
    get sync() {
      return open()
    },
    close: () => reader?.close()
  }
}

/**
 * isomorphic-git caches resolved pack objects only once a pack index's `readDepth` exceeds 3, but
 * never initialises that counter (it stays NaN), so every delta chain is re-inflated for every
 * blob. Setting the counter turns its own cache on.
 */
const enablePackCache = async (cache: object): Promise<void> => {
  for (const sym of Object.getOwnPropertySymbols(cache)) {
    const map = (cache as Record<symbol, unknown>)[sym]
    if (!(map instanceof Map)) continue
    for (const pending of map.values()) {
      const index: unknown = await Promise.resolve(pending).catch(() => null)
      if (index !== null && typeof index === 'object' && 'offsetCache' in index) {
        const ix = index as { readDepth?: number }
        if (!(typeof ix.readDepth === 'number' && ix.readDepth > 3)) ix.readDepth = 4
      }
    }
  }
}

/** The reference reader: isomorphic-git, which loads and checks whole packs. */
export const isoObjects = (gitdir: string): Objects => {
  const cache = {}
  let fsMemo: typeof fs | null = null
  return {
    read: async (oid) => {
      try {
        const { default: git } = await import('isomorphic-git')
        // The file system view is made once, on the first read.
        fsMemo ??= objectStoreFs(gitdir)
        const r = await git.readObject({
          fs: fsMemo,
          gitdir,
          oid,
          cache,
          format: 'content'
        })
        await enablePackCache(cache)
        const o = r.object as Uint8Array
        return { type: r.type as ObjectType, content: Buffer.from(o.buffer, o.byteOffset, o.byteLength) }
      } catch (e) {
        if ((e as { code?: string }).code === 'NotFoundError') return null
        throw e
      }
    },
    close: () => undefined
  }
}
