/**
 * The queue of a folder of case directories: the same listing the SQL store gives (state, block
 * reason, retry time, revision, budget left, runnable or why not), folded from each case's log.
 * Directories hold no leases; a case that does not open is listed with the reason. Every case
 * directory is one row, also when two hold the same case id.
 *
 * A long-lived reader (`vba serve`) keeps a {@link directoryQueue}: a case is read again only when
 * its stamp changed (HEAD's bytes, and the identity, size and times of HEAD, case.json and
 * events.jsonl; every acknowledged append replaces HEAD), so a listing of 10,000 verified cases
 * costs a few system calls per case. Reading one case is bounded in time.
 */
import { existsSync, promises as fsp, statSync } from 'node:fs'
import * as path from 'node:path'
import {
  queueRow,
  runnability,
  type QueueEntry,
  type QueuePage,
  type QueuePageOptions,
  type QueueRow
} from '../../projections/queue.js'
import { checkPageOptions, pageOfEntries } from './queue-page.js'
import { openCase } from './directory-store.js'
import { DECLARATION_FILE, HEAD_FILE, LOG_FILE } from './layout.js'
import { failure } from '../../failures/failure.js'
import { errnoOf } from '../fs-util.js'
import { FailureError, attempt } from '../../failures/error.js'
import { readRegularSync } from '../regular-file.js'

/** When HEAD last changed (every acknowledged append replaces it). */
const lastChange = async (dir: string): Promise<string> => {
  const st = await fsp.stat(path.join(dir, HEAD_FILE)).catch(() => null)
  return st === null ? '' : st.mtime.toISOString()
}

/**
 * What a case directory's state is known by without reading its log: HEAD's bytes and the
 * identity, size and times of HEAD, case.json and events.jsonl. Null when any of them cannot be
 * read as a regular file (such a case is never cached).
 */
export const caseStamp = (dir: string): string | null => {
  try {
    const head = readRegularSync(path.join(dir, HEAD_FILE), { maxBytes: 4096 })
    const id = (name: string): string => {
      const st = statSync(path.join(dir, name), { bigint: true })
      return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`
    }
    return `${head.toString('base64')}|${id(HEAD_FILE)}|${id(DECLARATION_FILE)}|${id(LOG_FILE)}`
  } catch {
    return null
  }
}

/**
 * Settles as `work`, or as `late()` (a value, or a throw) when it takes longer than `ms`: the work
 * is not stopped, only no longer waited for.
 */
export const within = <A>(work: Promise<A>, ms: number, late: () => A): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<A>((resolve) => {
    timer = setTimeout(() => resolve(Promise.resolve().then(late)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

type Row = Omit<QueueEntry, 'runnable' | 'why'> & { readonly why: string | null }

export interface DirectoryQueueOptions {
  /** How a case is opened (the tests count the reads). */
  readonly open?: typeof openCase
  /** How long reading one case may take before it is listed as not read (default 10 s). */
  readonly caseTimeoutMs?: number
}

export interface DirectoryQueue {
  /** Every case directory directly under the root, runnable ones first. */
  readonly list: (now?: number) => Promise<QueueEntry[]>
  /** One page in directory-name order (`after`: a directory name); INVALID_ARGUMENT for options out of bounds. */
  readonly page: (options?: QueuePageOptions, now?: number) => Promise<QueuePage>
}

/** The key of a case directory in a page: its name under the root. */
export const directoryKey = (e: QueueEntry): string => path.basename(e.dir ?? e.case_id)

/** A queue over `root` that remembers each case by its stamp (see the module comment). */
export const directoryQueue = (root: string, options: DirectoryQueueOptions = {}): DirectoryQueue => {
  const open = options.open ?? openCase
  const timeoutMs = options.caseTimeoutMs ?? 10_000
  const cache = new Map<string, { stamp: string; row: Row }>()
  const readRow = async (dir: string, name: string): Promise<{ row: Row; cacheable: boolean }> => {
    const failed = (why: string): Row => ({
      case_id: name,
      dir,
      title: null,
      generation: 0,
      state: 'NOT_STARTED',
      reason: null,
      retry_not_before: null,
      revision: 0,
      budget_left: null,
      pending_plan: null,
      model: null,
      tokens_total: 0,
      last_model_failure: null,
      why,
      lease: null,
      last_activity: ''
    })
    let timedOut = false
    const h = await within(attempt(open(dir)), timeoutMs, () => {
      timedOut = true
      return {
        _tag: 'Left' as const,
        left: failure('IO_ERROR', `reading the case took longer than ${timeoutMs / 1000} s; it is not listed as read`)
      }
    })
    if (h._tag === 'Left')
      return {
        row: { ...failed(`${h.left.code}: ${h.left.message}`), last_activity: await lastChange(dir) },
        cacheable: !timedOut
      }
    const q: QueueRow = queueRow(h.right.cursor.state)
    return {
      row: {
        case_id: h.right.declaration.case_id,
        dir,
        title: h.right.declaration.title ?? null,
        generation: h.right.cursor.seq,
        ...q,
        why: null,
        lease: null,
        last_activity: await lastChange(dir)
      },
      cacheable: true
    }
  }
  const list = async (now: number = Date.now()): Promise<QueueEntry[]> => {
    let names: string[]
    try {
      names = (await fsp.readdir(root, { withFileTypes: true }))
        .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
        .map((d) => d.name)
        .sort()
    } catch (e) {
      if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR')
        throw new FailureError(failure('CASE_NOT_FOUND', `${root} is not a directory of cases`, { root }))
      throw e
    }
    const entries: QueueEntry[] = []
    const seen = new Set<string>()
    for (const name of names) {
      const dir = path.join(root, name)
      // One synchronous check per directory: with thousands of cases, a promise each cost more.
      if (!existsSync(path.join(dir, DECLARATION_FILE))) continue
      seen.add(dir)
      const stamp = caseStamp(dir)
      let row = stamp === null ? undefined : cache.get(dir)?.stamp === stamp ? cache.get(dir)?.row : undefined
      if (row === undefined) {
        const read = await readRow(dir, name)
        row = read.row
        // Cached only under the stamp taken before the read: a write meanwhile changes the stamp.
        if (stamp !== null && read.cacheable && caseStamp(dir) === stamp) cache.set(dir, { stamp, row })
        else cache.delete(dir)
      }
      const run = row.why === null ? runnability(row, now) : { runnable: false, why: row.why }
      entries.push({ ...row, runnable: run.runnable, why: run.why })
    }
    for (const dir of cache.keys()) if (!seen.has(dir)) cache.delete(dir)
    return [...entries.filter((e) => e.runnable), ...entries.filter((e) => !e.runnable)]
  }
  const page = async (options: QueuePageOptions = {}, now: number = Date.now()): Promise<QueuePage> => {
    const o = checkPageOptions(options)
    return pageOfEntries(await list(now), directoryKey, o)
  }
  return { list, page }
}

/** Every case directory directly under `root`, runnable ones first (read afresh). */
export const listDirectoryQueue = async (root: string, now: number = Date.now()): Promise<QueueEntry[]> =>
  directoryQueue(root).list(now)
