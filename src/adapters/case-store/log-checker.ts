import { isUtf8 } from 'node:buffer'
import { checkLine, sequenceFindings, type CheckedLine, type RecordedEvent } from '../../events/chain.js'
import type { EventEnvelope } from '../../events/envelope.js'
import { collectRefs } from '../../events/refs.js'
import { finding, type Finding } from '../../events/findings.js'
import type { NotApplied, RuleFold, RuleViolation } from '../../domain/rules.js'
import { LOG_FILE } from './layout.js'

export interface LogCheckerOptions {
  readonly onEvent?: ScanOptions['onEvent']
  readonly onRef?: ScanOptions['onRef']
  readonly canonical?: boolean
  /** The rule fold the events go through (null: no rule checks, for benchmarks only). */
  readonly rules: RuleFold | null
  readonly start: { readonly seq: number; readonly hash: string | null; readonly bytes: number }
  readonly commands: CommandIndex
  readonly lastCommand: string | null
  readonly report: (f: Finding) => void
  /** The ids of the events before `start` (a catch-up), so a repeated id is found across appends. */
  readonly ids?: IdSet
  /** About how many events the log holds (its tables are sized for them). */
  readonly expected?: number
}
import type { ScanOptions } from './scan.js'
import { IdSet, type CommandIndex } from './id-table.js'

/** The longest line a log may hold. */
export const MAX_LINE_BYTES = 1 << 20

const NO_FINDINGS: readonly Finding[] = []
const NO_REFS: CheckedLine['refs'] = []

/** The events a RULE_NOT_APPLIED finding lists by seq (the rest are counted). */
const LISTED_SEQS = 20

/**
 * A rule the fold could not check, as a finding naming the rule, why and the events: a notice, or
 * an error under `strict` (`vba verify --strict`).
 */
export const notAppliedFinding = (n: NotApplied, strict: boolean): Finding => {
  const listed = n.seqs.slice(0, LISTED_SEQS).join(', ')
  const more = n.seqs.length > LISTED_SEQS ? ` and ${n.seqs.length - LISTED_SEQS} more` : ''
  const f = finding(
    'RULE_NOT_APPLIED',
    `${n.rule} not applied: ${n.reason}; ${n.seqs.length} event(s): seq ${listed}${more}`,
    { path: LOG_FILE, seq: n.seqs[0] ?? 0, data: { rule: n.rule, seqs: n.seqs.slice(0, 1000), events: n.seqs.length } }
  )
  return strict ? { ...f, severity: 'error' } : f
}

/** Why a line cannot be read as text (too long, not UTF-8), or null: verify's and export's EVENT_MALFORMED. */
export const unreadableLine = (bytes: Buffer | null, text: string | null, length: number): string | null =>
  length > MAX_LINE_BYTES
    ? `line is longer than ${MAX_LINE_BYTES} bytes`
    : text === null && (bytes === null || !isUtf8(bytes))
      ? 'line is not valid UTF-8'
      : null

/** COMMAND_SPLIT: the event at `line` belongs to a command that began earlier and was interrupted. */
const commandSplit = (env: Pick<EventEnvelope, 'command_id' | 'seq'>, line: number): Finding =>
  finding('COMMAND_SPLIT', `events of command ${env.command_id} are not contiguous`, {
    path: LOG_FILE,
    line,
    seq: env.seq
  })

/** A rule violation as a finding of the log. */
export const ruleFinding = (v: RuleViolation): Finding =>
  finding(v.code, `${v.rule}: ${v.message}`, { path: LOG_FILE, line: v.seq, seq: v.seq, data: { rule: v.rule } })

/**
 * The command index as a log is read: an event extends its command's span when it follows the
 * command's last event, else begins one; `index` is false when its command began earlier and was
 * interrupted (COMMAND_SPLIT).
 */
const commandRuns = (commands: CommandIndex, lastCommand: string | null) => {
  let run = lastCommand
  /** The index's entry of `run` (-1: not looked up yet). */
  let entry = -1
  return {
    index: (commandId: string, seq: number, lineStart: number, lineEnd: number): boolean => {
      if (commandId === run) {
        if (entry < 0) entry = commands.indexOf(commandId)
        if (entry >= 0) commands.extend(entry, seq, lineEnd)
        return true
      }
      run = commandId
      entry = commands.begin(commandId, seq, lineStart, lineEnd)
      return entry >= 0
    },
    last: (): string | null => run
  }
}

/**
 * The checks of a log, line by line: UTF-8 and size, the envelope, canonical form and hash, the
 * chain, ids and command contiguity, and the rules over every event that passed. Fed by the
 * directory scan (from events.jsonl) and by the SQL store (from its rows, the same line bytes), so
 * both stores judge a log the same way.
 */
export const logChecker = (o: LogCheckerOptions) => {
  const rules = o.rules
  const ids = o.ids ?? new IdSet(o.expected ?? 0)
  let expectSeq = o.start.seq + 1
  let expectPrev: string | null = o.start.hash
  let lastSeq = o.start.seq
  let lastHash: string | null = o.start.hash
  let lastEnd = o.start.bytes
  let lineNo = o.start.seq // lines and seqs agree in a valid log
  const runs = commandRuns(o.commands, o.lastCommand)
  const canonical = o.canonical !== false
  const report = o.report
  /** The rest of a line's checks once decoded (a CheckedLine's members, apart): ids, commands, rules; the chain moves on. */
  const accept = (
    env: EventEnvelope | undefined,
    event: RecordedEvent | undefined,
    refs: CheckedLine['refs'],
    findings: readonly Finding[],
    lineStart: number,
    lineEnd: number
  ): void => {
    for (const f of findings) report(f)
    if (env === undefined) {
      expectSeq++
      expectPrev = null
      return
    }
    if (!ids.insert(env.id))
      report(
        finding('EVENT_ID_DUPLICATE', `event id ${env.id} occurs twice`, { path: LOG_FILE, line: lineNo, seq: env.seq })
      )
    if (!runs.index(env.command_id, env.seq, lineStart, lineEnd)) report(commandSplit(env, lineNo))
    if (o.onRef !== undefined) for (const r of refs) o.onRef(r, env as EventEnvelope)
    if (findings.length === 0 && event !== undefined) {
      if (rules !== null) for (const v of rules.feed(event)) report(ruleFinding(v))
      o.onEvent?.(event)
    }
    expectSeq = env.seq + 1
    expectPrev = env.hash
    lastSeq = env.seq
    lastHash = env.hash
    lastEnd = lineEnd
  }
  /** A line that passed every check it has on its own: the chain's checks, then the rest. */
  const passedParts = (
    env: EventEnvelope,
    e: RecordedEvent,
    refs: CheckedLine['refs'],
    lineStart: number,
    lineEnd: number
  ): void => {
    lineNo++
    // In sequence and linked (the usual case): no findings to look for.
    const findings =
      e.seq === expectSeq && (expectPrev === null || e.prev === expectPrev)
        ? NO_FINDINGS
        : sequenceFindings(e, { seq: expectSeq, prev: expectPrev }, { path: LOG_FILE, line: lineNo, seq: e.seq })
    accept(env, e, refs, findings, lineStart, lineEnd)
  }
  return {
    /** One line (without its LF): the bytes, or the text when it is known to be valid UTF-8. */
    line: (bytes: Buffer | null, text: string | null, lineStart: number, lineEnd: number): void => {
      lineNo++
      const unreadable = unreadableLine(bytes, text, lineEnd - lineStart)
      if (unreadable !== null) {
        report(finding('EVENT_MALFORMED', unreadable, { path: LOG_FILE, line: lineNo }))
        expectSeq++
        expectPrev = null
        return
      }
      const line = text ?? (bytes as Buffer).toString('utf8')
      const c = checkLine(line, { seq: expectSeq, prev: expectPrev, lineNo, canonical })
      accept(c.envelope, c.event, c.refs, c.findings, lineStart, lineEnd)
    },
    /** A line a worker checked but for the chain, as its event (`storedData`: its data as stored, if it holds references). */
    checked: (event: RecordedEvent, storedData: (() => unknown) | null, lineStart: number, lineEnd: number): void => {
      const refs = storedData !== null && o.onRef !== undefined ? collectRefs(storedData()).refs : NO_REFS
      // The envelope members the rest reads (id, command_id, seq, hash) are the event's own.
      passedParts(event as unknown as EventEnvelope, event, refs, lineStart, lineEnd)
    },
    /** The end of the log: what the last command still owed. */
    end: (): void => {
      if (rules !== null) for (const v of rules.end()) report(ruleFinding(v))
    },
    seq: (): number => lastSeq,
    hash: (): string | null => lastHash,
    bytes: (): number => lastEnd,
    lastCommand: runs.last,
    eventIds: (): number => ids.size,
    ids: (): IdSet => ids
  }
}

/** The checks of one log (see logChecker). */
export type LogChecker = ReturnType<typeof logChecker>
