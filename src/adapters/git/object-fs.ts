/**
 * The file system isomorphic-git reads a snapshot's objects through. It answers the questions
 * isomorphic-git asks for every object (is there a loose object file? which packs exist?) from
 * listings taken once, instead of a failing open() and a readdir() per object. The object store
 * of a pinned commit does not change while a snapshot is open; a `git gc` in between shows up as
 * a read error of the snapshot, reported as SOURCE_UNAVAILABLE.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'

const enoent = (): NodeJS.ErrnoException => {
  const e: NodeJS.ErrnoException = new Error('ENOENT: no such file')
  e.code = 'ENOENT'
  return e
}
// One shared error object: building a new Error (with a stack) per missing loose object is slow.
const ENOENT = Object.freeze(enoent())

export const objectStoreFs = (gitdir: string): typeof fs => {
  const objects = path.join(gitdir, 'objects')
  const loose = new Set<string>()
  let packs: string[] = []
  try {
    for (const dir of fs.readdirSync(objects)) {
      if (/^[0-9a-f]{2}$/.test(dir)) for (const f of fs.readdirSync(path.join(objects, dir))) loose.add(`${dir}/${f}`)
    }
    packs = fs.readdirSync(path.join(objects, 'pack'))
  } catch {
    // an empty or odd object store: fall through to the real file system
  }
  const LOOSE = new RegExp(`^${objects.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([0-9a-f]{2}/[0-9a-f]{38})$`)
  const packDir = path.join(objects, 'pack')
  // isomorphic-git stats the git directory on every call to find out what kind of repository it is.
  const gitdirStat = fs.statSync(gitdir)
  const promises = {
    ...fs.promises,
    stat: async (p: fs.PathLike, options?: unknown): Promise<unknown> =>
      String(p) === gitdir ? gitdirStat : fs.promises.stat(p, options as undefined),
    readFile: async (p: fs.PathLike, options?: unknown): Promise<Buffer | string> => {
      const m = LOOSE.exec(String(p))
      if (m?.[1] !== undefined && !loose.has(m[1])) throw ENOENT
      return fs.promises.readFile(p, options as undefined)
    },
    readdir: async (p: fs.PathLike, options?: unknown): Promise<unknown> => {
      if (String(p) === packDir) return [...packs]
      return fs.promises.readdir(p, options as undefined)
    }
  }
  return { ...fs, promises } as unknown as typeof fs
}
