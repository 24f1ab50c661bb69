/**
 * Cases as BagIt 1.0 bags. The payload (data/) is the case directory as of one generation; the
 * tag files say which case, format version and generation it is. Everything in the bag is a
 * function of the case's content, so the same case always gives byte-identical bags: the date is
 * the date of the last event, entries are sorted, owners and times fixed.
 */
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { encodeManifestPath } from '../../domain/bag-paths.js'
import { isUtf8 } from 'node:buffer'
import { checkLine, genesisHash, type CheckedLine } from '../../events/chain.js'
import { CaseDeclaration, Head } from '../../events/envelope.js'
import { finding, isError, type Finding } from '../../events/findings.js'
import { unreadableLine } from '../case-store/log-checker.js'
import { objectPath } from '../../events/refs.js'
import { FailureError } from '../../failures/error.js'
import { isFileRefusal, openRegular, readRegular } from '../regular-file.js'
import { corrupt } from '../case-store/handle.js'
import { ensureCaseDir } from '../case-store/case-dir.js'
import { linkedObjectDirectory, notOwnDirectory } from '../case-store/objects.js'
import { DECLARATION_FILE, HEAD_FILE, LOG_FILE } from '../case-store/layout.js'
import { VERSION } from '../../version.js'
import { parseBoundedBytes } from '../../events/bounds.js'

export const BAGIT_TXT = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n'

/** One payload file of a case bag: its data-relative path and where its bytes come from. @category transport */
export interface PayloadFile {
  /** Path under data/. */
  readonly path: string
  readonly size: number
  /** Bytes held in memory (case.json, HEAD, the log prefix) or a file to stream. */
  readonly bytes?: Buffer
  readonly file?: string
  /** Bytes fetched when the bag is written. */
  readonly load?: () => Promise<Buffer>
  /** Bytes read in chunks when the bag is written (objects of a SQL store): memory holds one chunk. */
  readonly stream?: () => AsyncIterable<Buffer>
  /** The sha256 the content must have (objects are named by it). */
  readonly expectSha256?: string
}

/** A consistent view of a case at one generation, ready to be bagged. @category transport */
export interface CaseView {
  readonly caseId: string
  readonly generation: number
  readonly headHash: string
  /** The time of the last event (or the case's creation): the bag's date and every entry's mtime. */
  readonly at: Date
  readonly payload: readonly PayloadFile[]
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

/**
 * Takes the view of a case at the generation HEAD names when this is called. The log below HEAD's
 * byte length never changes and objects are write-once, so a writer appending meanwhile does not
 * disturb the view. The view's log is checked like open does (chain, hashes, canonical form).
 */
export const caseView = async (dir: string): Promise<CaseView> => {
  const root = path.resolve(dir)
  await ensureCaseDir(root)
  // Regular files only, never through a link, HEAD and case.json bounded (as open reads them).
  const record = async (name: string, code: 'HEAD_INVALID' | 'CASE_DECLARATION_INVALID'): Promise<Buffer> =>
    readRegular(path.join(root, name), { maxBytes: 64 << 10, shown: name }).catch((e: unknown) => {
      throw isFileRefusal(e)
        ? new FailureError(corrupt([{ code, severity: 'error', message: e.failure.message, path: name }]))
        : e
    })
  const headBytes = await record(HEAD_FILE, 'HEAD_INVALID')
  const head = Head.decode(safeJson(headBytes))
  if (E.isLeft(head))
    throw new FailureError(
      corrupt([{ code: 'HEAD_INVALID', severity: 'error', message: 'HEAD is invalid', path: HEAD_FILE }])
    )
  const declBytes = await record(DECLARATION_FILE, 'CASE_DECLARATION_INVALID')
  const { fh } = await openRegular(path.join(root, LOG_FILE), { shown: LOG_FILE }).catch((e: unknown) => {
    throw isFileRefusal(e)
      ? new FailureError(
          corrupt([{ code: 'LOG_MISSING', severity: 'error', message: e.failure.message, path: LOG_FILE }])
        )
      : e
  })
  const log = Buffer.alloc(head.right.bytes)
  try {
    const { bytesRead } = await fh.read(log, 0, log.length, 0)
    if (bytesRead !== log.length)
      throw new FailureError(
        corrupt([
          {
            code: 'LOG_TRUNCATED',
            severity: 'error',
            message: 'events.jsonl is shorter than HEAD acknowledges',
            path: LOG_FILE
          }
        ])
      )
  } finally {
    await fh.close()
  }
  // Objects are read by their paths: never through a link to directories outside the case.
  const linked = await linkedObjectDirectory(root)
  if (linked !== null) throw new FailureError(corrupt([notOwnDirectory(linked)]))
  return viewOf(headBytes, declBytes, log, (rel) => ({ file: path.join(root, rel) }))
}

/**
 * The view of a case package given its bytes (HEAD, case.json, the log up to HEAD) and where each
 * object's bytes come from: the log is checked like open does (chain, hashes, canonical form).
 * Both stores build their bags with it, so they give the same bag for the same case.
 */
export const viewOf = (
  headBytes: Buffer,
  declBytes: Buffer,
  log: Buffer,
  object: (
    rel: string,
    digest: string,
    size: number
  ) =>
    | { readonly file: string }
    | { readonly bytes: Buffer }
    | { readonly load: () => Promise<Buffer> }
    | { readonly stream: () => AsyncIterable<Buffer> }
): CaseView => {
  const fail = (findings: Finding[]): never => {
    throw new FailureError(corrupt(findings))
  }
  const head = Head.decode(safeJson(headBytes))
  const decl = CaseDeclaration.decode(safeJson(declBytes))
  if (E.isLeft(head))
    return fail([{ code: 'HEAD_INVALID', severity: 'error', message: 'HEAD is invalid', path: HEAD_FILE }])
  if (E.isLeft(decl))
    return fail([
      { code: 'CASE_DECLARATION_INVALID', severity: 'error', message: 'case.json is invalid', path: DECLARATION_FILE }
    ])
  if (log.length !== head.right.bytes)
    fail([
      { code: 'LOG_TRUNCATED', severity: 'error', message: 'the log is shorter than HEAD acknowledges', path: LOG_FILE }
    ])
  const genesis = genesisHash(decl.right)
  if (E.isLeft(genesis)) throw new FailureError(genesis.left)
  let at = decl.right.created_at
  const refs = new Map<string, number>()
  const findings: Finding[] = []
  const lines = logLines(log)
  if (lines.pop()?.length !== 0)
    findings.push({
      code: 'HEAD_MISMATCH',
      severity: 'error',
      message: 'HEAD does not end on a line boundary',
      path: HEAD_FILE
    })
  // Each line as verify checks it (log-checker.ts): one that is no text (not UTF-8, too long) is
  // EVENT_MALFORMED, never decoded with replacement characters into an "edited" event, and the
  // line after an unreadable one is not checked against a link it cannot have.
  let link: string | null = genesis.right
  lines.forEach((line, i) => {
    const unreadable = unreadableLine(line.bytes, line.text, line.length)
    const c: Pick<CheckedLine, 'envelope' | 'refs' | 'findings'> =
      unreadable === null
        ? checkLine(line.text ?? line.bytes.toString('utf8'), { seq: i + 1, prev: link, lineNo: i + 1 })
        : { refs: [], findings: [finding('EVENT_MALFORMED', unreadable, { path: LOG_FILE, line: i + 1 })] }
    findings.push(...c.findings)
    link = c.envelope?.hash ?? null
    if (c.envelope !== undefined) at = c.envelope.at
    for (const r of c.refs) refs.set(r.digest, r.size)
  })
  if (lines.length !== head.right.seq || link !== head.right.hash)
    findings.push({ code: 'HEAD_MISMATCH', severity: 'error', message: 'HEAD does not match the log', path: HEAD_FILE })
  if (findings.some(isError)) fail(findings)
  const payload: PayloadFile[] = [
    { path: HEAD_FILE, size: headBytes.length, bytes: headBytes },
    { path: DECLARATION_FILE, size: declBytes.length, bytes: declBytes },
    { path: LOG_FILE, size: log.length, bytes: log }
  ]
  // Object sizes and digests are checked as the bytes are read (a missing object fails the read).
  for (const [digest, size] of refs) {
    const rel = objectPath(digest)
    payload.push({ path: rel, size, ...object(rel, digest, size), expectSha256: digest.slice('sha256:'.length) })
  }
  payload.sort((a, b) => byteOrder(a.path, b.path))
  return {
    caseId: decl.right.case_id,
    generation: head.right.seq,
    headHash: head.right.hash,
    at: new Date(Math.floor(Date.parse(at) / 1000) * 1000),
    payload
  }
}

const safeJson = (b: Buffer): unknown => parseBoundedBytes(b)

/**
 * The lines of a log (split at LF; the last is what follows the last LF): each line's bytes, and
 * its text when the log is valid UTF-8 (the usual case; LF never occurs inside a multi-byte
 * sequence, so each line is then valid too).
 */
const logLines = (log: Buffer): { bytes: Buffer; text: string | null; length: number }[] => {
  const text = isUtf8(log)
  const lines: { bytes: Buffer; text: string | null; length: number }[] = []
  for (let s = 0; ; ) {
    const e = log.indexOf(10, s)
    const bytes = log.subarray(s, e < 0 ? log.length : e)
    lines.push({ bytes, text: text ? bytes.toString('utf8') : null, length: bytes.length })
    if (e < 0) return lines
    s = e + 1
  }
}

/** bag-info.txt of a case bag (deterministic). */
export const bagInfo = (view: CaseView): string => {
  const bytes = view.payload.reduce((s, f) => s + f.size, 0)
  return `${[
    `Bag-Software-Agent: vba ${VERSION}`,
    `Bagging-Date: ${view.at.toISOString().slice(0, 10)}`,
    `External-Identifier: ${view.caseId}`,
    `Payload-Oxum: ${bytes}.${view.payload.length}`,
    'VBA-Case-Format-Version: 1',
    `VBA-Case-Generation: ${view.generation}`,
    `VBA-Case-Head: ${view.headHash}`
  ].join('\n')}\n`
}

/** A manifest for `files` (sorted by path) with checksums of one algorithm. */
export const manifest = (entries: ReadonlyArray<readonly [string, string]>): string =>
  [...entries]
    .sort(([a], [b]) => byteOrder(a, b))
    .map(([p, sum]) => `${sum}  ${encodeManifestPath(p)}\n`)
    .join('')
