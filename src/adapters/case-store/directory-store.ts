/** The directory store: a case is a directory holding its package (the embedded default). */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import type { CaseStore, CaseAt } from './store.js'
import { initCase } from './init.js'
import { openCaseIn, type CaseHandle } from './open.js'
import { appendToDirectory, recordedInDirectory } from './append.js'
import { readObject } from './objects.js'
import { listPackage, verifyCase } from './verify.js'
import type { Finding } from '../../events/findings.js'
import { fail, FailureError } from '../../failures/error.js'
import { replayCase } from './replay.js'
import { caseView } from '../bagit/case-bag.js'
import { definedMembers } from '../../optional.js'
import { writeSummary } from './summary.js'

/** @category Stores */
export const directoryStore: CaseStore = {
  kind: 'directory',
  describe: (ref) => path.resolve(ref),
  create: (ref, o) =>
    initCase({
      dir: ref,
      ...definedMembers(o, 'caseId', 'title', 'env')
    }),
  open: (ref) => openCase(ref),
  append: async (handle, cmd, options = {}) => {
    const outcome = await appendToDirectory(handle, cmd, options)
    // The listing's shortcut (src/adapters/case-store/summary.ts), after the append is acknowledged.
    if (outcome.status === 'appended') {
      const c = handle.cursor
      await writeSummary(handle.dir, { seq: c.seq, hash: c.hash, bytes: c.bytes }, c.state)
    }
    return outcome
  },
  recordedOutcome: (handle, commandId) => recordedInDirectory(handle, commandId),
  readObject: (ref, object) => readObject(ref, object),
  verify: (ref, options = {}) => verifyCase(ref, options),
  replay: (ref, projections) => replayCase(ref, projections),
  view: async (ref) => {
    const view = await caseView(ref).catch(async (e: unknown) => {
      // A stray file where a shard directory belongs stops the view before it reads an object:
      // it is a file the bag would leave out, so say so and name it (a link is left as it was).
      if (await isStrayFile(ref, e)) await refuseForeignFiles(ref)
      throw e
    })
    await refuseForeignFiles(ref)
    return view
  }
}

/** Whether `e` is the view's refusal of one entry under objects/ that is a regular file of the case. */
const isStrayFile = async (dir: string, e: unknown): Promise<boolean> => {
  if (!(e instanceof FailureError) || e.failure.code !== 'CASE_CORRUPT') return false
  const findings = (e.failure.data as { findings?: readonly Finding[] } | undefined)?.findings ?? []
  const rel = findings.length === 1 && findings[0]?.code === 'FOREIGN_FILE' ? findings[0].path : undefined
  if (rel === undefined) return false
  const st = await fsp.lstat(path.join(dir, rel)).catch(() => null)
  return st?.isFile() === true
}

/** How many of the files a bag would leave out the message names (data.paths holds more). */
const NAMED_FOREIGN = 10

/**
 * A bag holds the package's own files only, so a file that is not one (notes beside the log, a
 * stray name under objects/) would be left out of it without a word, and the bag would verify
 * where the directory does not. Export refuses such a case instead (CASE_CORRUPT, as verify's
 * FOREIGN_FILE is an error), naming the files: nothing is dropped. Leftovers a bag never holds (a
 * lock, a run marker, temporary files, the listing's cache) are no reason to refuse.
 */
const refuseForeignFiles = async (dir: string): Promise<void> => {
  const found: Finding[] = []
  await listPackage(path.resolve(dir), found)
  const foreign = found.filter((f) => f.code === 'FOREIGN_FILE').map((f) => f.path ?? f.message)
  if (foreign.length === 0) return
  const named = foreign.slice(0, NAMED_FOREIGN).join(', ')
  const more =
    foreign.length > NAMED_FOREIGN ? `, and ${foreign.length - NAMED_FOREIGN} more (vba verify lists them)` : ''
  fail(
    'CASE_CORRUPT',
    `${foreign.length} file(s) in the case directory do not belong to the case package, and a bag would leave them out: ${named}${more}; move them out of the case directory, then export (nothing was written)`,
    { paths: foreign.slice(0, 1000), findings: found.filter((f) => f.code === 'FOREIGN_FILE').slice(0, 20) }
  )
}

/**
 * Opens a case directory for appending (through `openCaseIn` with this store): checks declaration, HEAD, every
 * event line and every event's rules, and folds the case state. A torn or unacknowledged tail is
 * reported in `notices` and cut by the next append; anything else that does not check out is
 * CASE_CORRUPT with its findings. Changes nothing on disk.
 */
export const openCase = (dir: string): Promise<CaseHandle> => openCaseIn(dir, directoryStore)

/** The store and reference of a case address. */
export const locate = (at: CaseAt): { readonly store: CaseStore; readonly ref: string } =>
  typeof at === 'string' ? { store: directoryStore, ref: at } : { store: at.store, ref: at.caseId }
