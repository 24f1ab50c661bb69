/**
 * The queue of a folder of case directories: the same listing the SQL store gives (state, block
 * reason, retry time, revision, budget left, runnable or why not), folded from each case's log.
 * Directories hold no leases; a case that does not open is listed with the reason.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { queueRow, runnability, type QueueEntry } from '../../projections/queue.js'
import { openCase } from './open.js'
import { DECLARATION_FILE, HEAD_FILE } from './layout.js'
import { failure } from '../../domain/failure.js'
import { FailureError, errnoOf } from '../fs-util.js'

/** When HEAD last changed (every acknowledged append replaces it). */
const lastChange = async (dir: string): Promise<string> => {
  const st = await fsp.stat(path.join(dir, HEAD_FILE)).catch(() => null)
  return st === null ? '' : st.mtime.toISOString()
}

/** Every case directory directly under `root`, runnable ones first. */
export const listDirectoryQueue = async (root: string, now: number = Date.now()): Promise<QueueEntry[]> => {
  let names: string[]
  try {
    names = (await fsp.readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory() && !d.name.startsWith('.')).map((d) => d.name).sort()
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') throw new FailureError(failure('CASE_NOT_FOUND', `${root} is not a directory of cases`, { root }))
    throw e
  }
  const entries: QueueEntry[] = []
  for (const name of names) {
    const dir = path.join(root, name)
    if (!(await fsp.access(path.join(dir, DECLARATION_FILE)).then(() => true, () => false))) continue
    const h = await openCase(dir)()
    if (h._tag === 'Left') {
      entries.push({ case_id: name, dir, title: null, generation: 0, state: 'NOT_STARTED', reason: null, retry_not_before: null, revision: 0, budget_left: null, pending_plan: null, model: null, tokens_total: 0, last_model_failure: null, runnable: false, why: `${h.left.code}: ${h.left.message}`, lease: null, last_activity: await lastChange(dir) })
      continue
    }
    const row = queueRow(h.right.cursor.state)
    const run = runnability(row, now)
    entries.push({ case_id: h.right.declaration.case_id, dir, title: h.right.declaration.title ?? null, generation: h.right.cursor.seq, ...row, runnable: run.runnable, why: run.why, lease: null, last_activity: await lastChange(dir) })
  }
  return [...entries.filter((e) => e.runnable), ...entries.filter((e) => !e.runnable)]
}
