/** The directory store: a case is a directory holding its package (the embedded default). */
import * as path from 'node:path'
import type { CaseStore, CaseAt } from './store.js'
import { initCase } from './init.js'
import { openCaseIn, type CaseHandle } from './open.js'
import { appendToDirectory, recordedInDirectory } from './append.js'
import { readObject } from './objects.js'
import { verifyCase } from './verify.js'
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
  view: (ref) => caseView(ref)
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
