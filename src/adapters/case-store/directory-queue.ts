/**
 * The queue of a folder of case directories: the same listing the SQL store gives (state, block
 * reason, retry time, revision, budget left, runnable or why not), folded from each case's log.
 * Directories hold no leases; a case that does not open is listed with the reason. Every case
 * directory is one row, also when two hold the same case id.
 *
 * A long-lived reader (`vba serve`) keeps a {@link directoryQueue}: a case is read again only when
 * its stamp changed (HEAD's bytes, and the identity, size and times of HEAD, case.json and
 * events.jsonl; every acknowledged append replaces HEAD), so a listing of 10,000 verified cases
 * costs a few system calls per case. Reading one case is bounded in time. With `summaries`, a case
 * not read before is listed from the summary beside its log when that summary names HEAD's head
 * (src/adapters/case-store/summary.ts) and the log is a regular file at least as long as HEAD says:
 * HEAD, the summary and case.json are read, not the log;
 * {@link DirectoryQueue.check} reads the log of one case (when it is opened) and lists what the log
 * says, marked when the summary said otherwise.
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
import { CaseDeclaration, Head } from '../../events/envelope.js'
import { decodeRecordFile } from './scan.js'
import { summaryAtHead } from './summary.js'
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
export const caseStamp = (dir: string): string | null => stampAndHead(dir)?.stamp ?? null

/** The stamp of a case directory and HEAD's bytes it was taken with (null as for {@link caseStamp}). */
const stampAndHead = (dir: string): { readonly stamp: string; readonly head: Buffer } | null => {
  try {
    const head = readRegularSync(path.join(dir, HEAD_FILE), { maxBytes: 4096 })
    const id = (name: string): string => {
      const st = statSync(path.join(dir, name), { bigint: true })
      return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`
    }
    return { stamp: `${head.toString('base64')}|${id(HEAD_FILE)}|${id(DECLARATION_FILE)}|${id(LOG_FILE)}`, head }
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
  /** List a case not read before from its summary when it names HEAD's head (default false: every log is read). */
  readonly summaries?: boolean
}

export interface DirectoryQueue {
  /** Every case directory directly under the root, runnable ones first. */
  readonly list: (now?: number) => Promise<QueueEntry[]>
  /** One page in directory-name order (`after`: a directory name); INVALID_ARGUMENT for options out of bounds. */
  readonly page: (options?: QueuePageOptions, now?: number) => Promise<QueuePage>
  /**
   * Reads the log of the case in `dir` (a case being opened) and lists it from then on as the log
   * says; a row listed from a summary that said otherwise is marked (SUMMARY_MISMATCH, not runnable).
   */
  readonly check: (dir: string) => Promise<void>
}

/** The row of a case that could not be read, and why. */
const unreadRow = (dir: string, name: string, why: string): Row => ({
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

/** The fields of a queue row, to compare a summary's with the log's. */
const rowKey = (r: QueueRow): string =>
  JSON.stringify([
    r.state,
    r.reason,
    r.retry_not_before,
    r.revision,
    r.budget_left,
    r.pending_plan,
    r.model,
    r.tokens_total,
    r.last_model_failure
  ])

/** A case's row from its summary and case.json, when the summary names HEAD's head; else null. */
const summaryRow = async (dir: string, head: Buffer): Promise<Row | null> => {
  const q = summaryAtHead(dir, head)
  if (q === null) return null
  let decl: CaseDeclaration
  try {
    const d = decodeRecordFile(
      readRegularSync(path.join(dir, DECLARATION_FILE), { maxBytes: 1 << 20 }).toString('utf8'),
      CaseDeclaration
    )
    if (d._tag === 'Left') return null
    decl = d.right
  } catch {
    return null
  }
  const generation = decodeRecordFile(head.toString('utf8'), Head)
  if (generation._tag === 'Left') return null
  // The log must at least be a regular file holding the bytes HEAD acknowledges; else it is read.
  const log = statSync(path.join(dir, LOG_FILE), { throwIfNoEntry: false })
  if (log === undefined || !log.isFile() || log.size < generation.right.bytes) return null
  return {
    case_id: decl.case_id,
    dir,
    title: decl.title ?? null,
    generation: generation.right.seq,
    ...q,
    why: null,
    lease: null,
    last_activity: await lastChange(dir)
  }
}

/** The key of a case directory in a page: its name under the root. */
export const directoryKey = (e: QueueEntry): string => path.basename(e.dir ?? e.case_id)

/** A queue over `root` that remembers each case by its stamp (see the module comment). */
export const directoryQueue = (root: string, options: DirectoryQueueOptions = {}): DirectoryQueue => {
  const open = options.open ?? openCase
  const timeoutMs = options.caseTimeoutMs ?? 10_000
  const cache = new Map<string, { stamp: string; row: Row; fromSummary: boolean }>()
  const readRow = async (dir: string, name: string): Promise<{ row: Row; cacheable: boolean }> => {
    const failed = (why: string): Row => unreadRow(dir, name, why)
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
  /** The row of a case: cached under its stamp, else from its summary (with `summaries`), else from its log. */
  const rowOf = async (dir: string, name: string, fromLog = false): Promise<Row> => {
    const at = stampAndHead(dir)
    const stamp = at?.stamp ?? null
    const known = stamp === null ? undefined : cache.get(dir)
    if (known !== undefined && known.stamp === stamp && !(fromLog && known.fromSummary)) return known.row
    const summarised = at !== null && !fromLog && options.summaries === true ? await summaryRow(dir, at.head) : null
    const read = summarised !== null ? { row: summarised, cacheable: true } : await readRow(dir, name)
    let row = read.row
    if (known?.fromSummary === true && known.stamp === stamp && rowKey(known.row) !== rowKey(row))
      row = { ...row, why: 'SUMMARY_MISMATCH: the summary beside the log did not match the log (listed from the log)' }
    // Cached only under the stamp taken before the read: a write meanwhile changes the stamp.
    if (stamp !== null && read.cacheable && caseStamp(dir) === stamp)
      cache.set(dir, { stamp, row, fromSummary: summarised !== null })
    else cache.delete(dir)
    return row
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
      const row = await rowOf(dir, name)
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
  const check = async (dir: string): Promise<void> => {
    await rowOf(dir, path.basename(dir), true)
  }
  return { list, page, check }
}

/** Every case directory directly under `root`, runnable ones first (read afresh). */
export const listDirectoryQueue = async (root: string, now: number = Date.now()): Promise<QueueEntry[]> =>
  directoryQueue(root).list(now)
