/**
 * What the directory scan ({@link scanCase}) and the SQL store's scan of its rows share around the
 * one {@link logChecker}: the capped findings, the rule fold and checker started from the
 * declaration (or a resumed prefix), and the result once the whole log went through the checker.
 */
import * as E from 'fp-ts/lib/Either.js'
import { genesisHash } from '../../events/chain.js'
import type { CaseDeclaration, Head } from '../../events/envelope.js'
import type { Finding } from '../../events/findings.js'
import { ruleFold, type RuleFold } from '../../domain/rules.js'
import { definedMembers, optional } from '../../optional.js'
import { logChecker, type LogChecker } from './log-checker.js'
import type { ScanOptions, ScanResult } from './scan.js'
import { CommandIndex } from './id-table.js'

/** Findings a scan keeps (the rest are counted). */
const MAX_FINDINGS = 1000

/** The findings of one scan: the first {@link MAX_FINDINGS} kept, the rest counted. */
export const findingSink = () => {
  const findings: Finding[] = []
  let omitted = 0
  return {
    findings,
    report: (f: Finding): void => {
      if (findings.length < MAX_FINDINGS) findings.push(f)
      else omitted++
    },
    omitted: (): number => omitted
  }
}
export type FindingSink = ReturnType<typeof findingSink>

/** The options both scans take. */
export type LogScanOptions = Pick<ScanOptions, 'onEvent' | 'onRef' | 'canonical' | 'rules' | 'notAfter' | 'resume'> & {
  /** About how many events the log holds (HEAD says), so the id tables need not grow. */
  readonly expected?: number
}

/** A scan under way: where the log is read from, its command index, rule fold and checker. */
export interface LogScan {
  readonly start: { readonly seq: number; readonly hash: string | null; readonly bytes: number }
  readonly commands: CommandIndex
  readonly rules: RuleFold
  readonly checker: LogChecker
}

/** Starts the checks of a log after `declaration`'s genesis, or after the prefix `o.resume` names. */
export const startLogScan = (
  declaration: CaseDeclaration | null,
  o: LogScanOptions,
  report: FindingSink['report']
): LogScan => {
  const genesis = declaration === null ? null : genesisHash(declaration)
  const start = o.resume ?? { seq: 0, hash: genesis !== null && E.isRight(genesis) ? genesis.right : null, bytes: 0 }
  const commands = o.resume?.commands ?? new CommandIndex(o.expected ?? 0)
  const rules = ruleFold(o.resume?.state, {
    ...(declaration === null ? {} : { createdAt: declaration.created_at }),
    ...optional('formatGeneration', declaration?.format_generation),
    ...optional('caseId', declaration?.case_id),
    ...optional('notAfter', o.notAfter)
  })
  const checker = logChecker({
    ...definedMembers(o, 'onEvent', 'onRef', 'canonical'),
    start,
    commands,
    lastCommand: o.resume?.lastCommand ?? null,
    report,
    rules: o.rules === false ? null : rules,
    ...(o.resume?.ids === undefined ? {} : { ids: o.resume.ids }),
    ...(o.expected === undefined ? {} : { expected: o.expected })
  })
  return { start, commands, rules, checker }
}

/** The result of a scan whose log went through the checker (`fileBytes`: the size read). */
export const logScanResult = (
  declaration: CaseDeclaration | null,
  head: Head | null,
  sink: FindingSink,
  scan: LogScan,
  fileBytes: number
): ScanResult => ({
  declaration,
  head,
  findings: sink.findings,
  omittedFindings: sink.omitted(),
  seq: scan.checker.seq(),
  hash: scan.checker.hash(),
  bytes: scan.checker.bytes(),
  fileBytes,
  commands: scan.commands,
  lastCommand: scan.checker.lastCommand(),
  eventIds: scan.checker.eventIds(),
  ids: scan.checker.ids(),
  state: scan.rules.state(),
  obligations: scan.rules.obligations(),
  notApplied: scan.rules.notApplied()
})
