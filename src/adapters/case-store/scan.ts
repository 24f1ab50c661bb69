/**
 * One streaming pass over a case package's declaration, HEAD and log: every check that needs no
 * object contents. Open, verify and replay are all built on it, so they can never disagree about
 * what a valid log is. Memory is bounded by the command index, not by the log.
 */
import type { promises as fsp } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson } from '../../events/canonical.js'
import type { RecordedEvent } from '../../events/chain.js'
import { CaseDeclaration, Head, type EventEnvelope } from '../../events/envelope.js'
import { finding, type Finding } from '../../events/findings.js'
import type { FoundRef } from '../../events/refs.js'
import { unknownMember } from '../../events/strict.js'
import { describeErrors } from '../../events/decode.js'
import type { NotApplied, Obligation } from '../../domain/rules.js'
import type { CaseState } from '../../domain/case-state.js'
import { DECLARATION_FILE, HEAD_FILE, LOG_FILE } from './layout.js'
import { errnoOf } from '../fs-util.js'
import { isFileRefusal, openRegular, readRegular } from '../regular-file.js'
import { feedLog } from './feed-log.js'
import type { LineWorkers } from './line-checks.js'
import { MAX_LINE_BYTES, type LogChecker } from './log-checker.js'
import { findingSink, logScanResult, startLogScan } from './log-scan.js'
import { boundsViolation } from '../../events/bounds.js'
import { type CommandIndex, IdSet } from './id-table.js'

/** @category cases */
export interface CommandSpan {
  readonly firstSeq: number
  lastSeq: number
  readonly start: number
  end: number
}

export interface ScanOptions {
  /** Called for every event that passed all checks, in order. */
  readonly onEvent?: (event: RecordedEvent) => void
  /** Called for every well-formed object reference. */
  readonly onRef?: (ref: FoundRef, envelope: EventEnvelope) => void
  /**
   * Check every event against the case's rules (default true). Only benchmarks turn it off, to
   * measure what the rules cost; a case is never valid without them.
   */
  readonly rules?: boolean
  /** Check RFC 8785 canonical form of every line (default true; replay and open skip it). */
  readonly canonical?: boolean
  /** Check lines on worker threads too from this log size on (default 8 MiB; tests lower it). */
  readonly parallelFromBytes?: number
  /** How many worker threads check lines (default: one on two cores, two on more; tests set it). */
  readonly lineWorkers?: number
  /** Line workers started ahead (startLineWorkersFor), used when the log is checked on workers; the caller stops them. */
  readonly startedWorkers?: LineWorkers | null
  /** Called after every chunk read: bytes of the log checked so far, and the total to check. */
  readonly onProgress?: (done: number, total: number) => void
  /** The verification time (epoch ms): an event dated after it is a finding (verify only). */
  readonly notAfter?: number
  /** Start after an already-verified prefix (incremental catch-up of an open handle). */
  readonly resume?: {
    readonly seq: number
    readonly hash: string
    readonly bytes: number
    /** The command index of the prefix; extended in place. */
    readonly commands: CommandIndex
    readonly lastCommand: string | null
    /** The case state after the prefix; folded further in place. */
    readonly state: CaseState
    /** The prefix's event ids; extended in place. */
    readonly ids?: IdSet
  }
}

export interface ScanResult {
  readonly declaration: CaseDeclaration | null
  readonly head: Head | null
  readonly findings: Finding[]
  readonly omittedFindings: number
  /** Seq, hash and end offset of the last event checked. */
  readonly seq: number
  readonly hash: string | null
  readonly bytes: number
  /** Size of events.jsonl when it was read (may exceed HEAD's bytes after a crash). */
  readonly fileBytes: number
  readonly commands: CommandIndex
  readonly lastCommand: string | null
  readonly eventIds: number
  /** Every event id of the log (seeded from a resume's set): the writer refuses a repeated one. */
  readonly ids: IdSet
  /** The case state folded from every event that passed the chain checks. */
  readonly state: CaseState
  /** Checks of object contents the rules left for a reader of objects (verify, the writer). */
  readonly obligations: readonly Obligation[]
  /** What the rules could not check (old versions, no binding recorded): notices, findings under --strict. */
  readonly notApplied: readonly NotApplied[]
}

/** Record files are small: HEAD is about 130 bytes, case.json under a few KiB. */
const MAX_RECORD_BYTES = 64 << 10

/** A record file's text; null when absent; a refusal (not a regular file, too large) as its reason. */
const readText = async (file: string, name: string): Promise<string | null | { refused: string }> => {
  try {
    return (await readRegular(file, { maxBytes: MAX_RECORD_BYTES, shown: name })).toString('utf8')
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return null
    if (isFileRefusal(e)) return { refused: e.failure.message }
    throw e
  }
}

/** Decodes a canonical-JSON-plus-LF record file; a non-canonical file is invalid. */
export const decodeRecordFile = <A>(
  text: string,
  codec: import('io-ts').Type<A, unknown, unknown>
): E.Either<string, A> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return E.left('not JSON')
  }
  const bounds = boundsViolation(parsed)
  if (bounds !== null) return E.left(bounds.message)
  const decoded = codec.decode(parsed)
  if (E.isLeft(decoded)) return E.left(describeErrors(decoded.left))
  const extra = unknownMember(codec, parsed)
  if (extra !== null) return E.left(`a member its schema does not name: ${extra}`)
  const canonical = canonicalJson(parsed)
  if (E.isLeft(canonical) || `${canonical.right}\n` !== text) return E.left('not canonical JSON followed by one LF')
  return E.right(decoded.right)
}

export const readDeclaration = async (dir: string): Promise<E.Either<Finding, CaseDeclaration>> => {
  const text = await readText(path.join(dir, DECLARATION_FILE), DECLARATION_FILE)
  if (text === null)
    return E.left(finding('CASE_DECLARATION_MISSING', 'case.json is missing', { path: DECLARATION_FILE }))
  if (typeof text !== 'string')
    return E.left(finding('CASE_DECLARATION_INVALID', text.refused, { path: DECLARATION_FILE }))
  return E.mapLeft((why: string) =>
    finding('CASE_DECLARATION_INVALID', `case.json is invalid: ${why}`, { path: DECLARATION_FILE })
  )(decodeRecordFile(text, CaseDeclaration))
}

export const readHead = async (dir: string): Promise<E.Either<Finding, Head>> => {
  const text = await readText(path.join(dir, HEAD_FILE), HEAD_FILE)
  if (text === null) return E.left(finding('HEAD_MISSING', 'HEAD is missing', { path: HEAD_FILE }))
  if (typeof text !== 'string') return E.left(finding('HEAD_INVALID', text.refused, { path: HEAD_FILE }))
  return E.mapLeft((why: string) => finding('HEAD_INVALID', `HEAD is invalid: ${why}`, { path: HEAD_FILE }))(
    decodeRecordFile(text, Head)
  )
}

/** Scans declaration, HEAD and log. Never changes a file. */
export const scanCase = async (dir: string, options: ScanOptions = {}): Promise<ScanResult> => {
  const sink = findingSink()
  const report = sink.report
  const decl = await readDeclaration(dir)
  if (E.isLeft(decl)) report(decl.left)
  const head = await readHead(dir)
  if (E.isLeft(head)) report(head.left)
  const declaration = E.isRight(decl) ? decl.right : null
  const headValue = E.isRight(head) ? head.right : null
  // HEAD says how many events the log holds; a HEAD that lies only sizes the tables (an event
  // line is over 200 bytes, so its byte count bounds what it may claim).
  const expected = headValue === null ? 0 : Math.min(headValue.seq, Math.floor(headValue.bytes / 200))
  const scan = startLogScan(declaration, { ...options, expected }, report)

  let fh: Awaited<ReturnType<typeof fsp.open>>
  try {
    // Only a regular file: a FIFO would hang the reader, a symlink to a device would never end.
    fh = (await openRegular(path.join(dir, LOG_FILE), { shown: LOG_FILE })).fh
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT' && !isFileRefusal(e)) throw e
    report(finding('LOG_MISSING', isFileRefusal(e) ? e.failure.message : 'events.jsonl is missing', { path: LOG_FILE }))
    return {
      declaration,
      head: headValue,
      findings: sink.findings,
      omittedFindings: sink.omitted(),
      seq: 0,
      hash: scan.start.hash,
      bytes: 0,
      fileBytes: 0,
      commands: scan.commands,
      lastCommand: options.resume?.lastCommand ?? null,
      eventIds: 0,
      ids: options.resume?.ids ?? new IdSet(),
      state: scan.rules.state(),
      obligations: [],
      notApplied: []
    }
  }
  let fileBytes = 0
  const { checker } = scan
  try {
    fileBytes = (await fh.stat()).size
    const limit = headValue === null ? fileBytes : Math.min(headValue.bytes, fileBytes)
    const carried = await feedLog(fh, scan.start.bytes, limit, checker, options)
    checker.end()
    if (headValue !== null) await checkHead(fh, headValue, fileBytes, carried, checker, report)
    else if (carried > 0)
      report(
        finding('TORN_TAIL', `events.jsonl ends with an incomplete line of ${carried} bytes`, {
          path: LOG_FILE,
          data: { bytes: carried }
        })
      )
  } finally {
    await fh.close()
  }
  return logScanResult(declaration, headValue, sink, scan, fileBytes)
}

/**
 * HEAD against the log as read: a log shorter than HEAD, a HEAD that is not the last event, and
 * bytes after what HEAD acknowledges (a crash leftover, cut on the next append).
 */
const checkHead = async (
  fh: FileHandle,
  head: Head,
  fileBytes: number,
  carried: number,
  checker: LogChecker,
  report: (f: Finding) => void
): Promise<void> => {
  const lastSeq = checker.seq()
  const lastHash = checker.hash()
  if (fileBytes < head.bytes) {
    report(
      finding('LOG_TRUNCATED', `events.jsonl has ${fileBytes} bytes but HEAD acknowledges ${head.bytes}`, {
        path: LOG_FILE,
        data: { file_bytes: fileBytes, head_bytes: head.bytes }
      })
    )
  } else if (carried > 0) {
    report(finding('HEAD_MISMATCH', 'HEAD does not end on a line boundary of events.jsonl', { path: HEAD_FILE }))
  } else if (lastSeq !== head.seq || lastHash !== head.hash) {
    report(
      finding('HEAD_MISMATCH', `HEAD acknowledges seq ${head.seq}, the log ends at seq ${lastSeq} with another hash`, {
        path: HEAD_FILE,
        data: { head_seq: head.seq, log_seq: lastSeq }
      })
    )
  }
  if (fileBytes > head.bytes) {
    const tailBytes = fileBytes - head.bytes
    const tail = Buffer.allocUnsafe(Math.min(tailBytes, MAX_LINE_BYTES * 4))
    const { bytesRead } = await fh.read(tail, 0, tail.length, head.bytes)
    const hasNewline = tail.subarray(0, bytesRead).includes(10)
    report(
      hasNewline
        ? finding(
            'UNACKNOWLEDGED_TAIL',
            `${tailBytes} bytes after the last acknowledged event were never acknowledged (crash leftover; cut on the next append)`,
            { path: LOG_FILE, data: { bytes: tailBytes } }
          )
        : finding(
            'TORN_TAIL',
            `a torn last line of ${tailBytes} bytes was never acknowledged (crash leftover; cut on the next append)`,
            { path: LOG_FILE, data: { bytes: tailBytes } }
          )
    )
  }
}
