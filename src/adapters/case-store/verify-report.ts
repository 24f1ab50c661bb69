/**
 * The verification of a scanned log, the same for every store (the directory's `verifyCase`, the
 * SQL store's `verifyInStore`): what it watches during the scan, and the report it judges after.
 */
import { causeFirst, finding, isError, type Finding } from '../../events/findings.js'
import type { FoundRef } from '../../events/refs.js'
import type { RecordedEvent } from '../../events/chain.js'
import type { EventEnvelope } from '../../events/envelope.js'
import { judgeSignedHead, type SignedHead } from '../../events/signed-note.js'
import { checkPrompts } from '../../projections/prompt-derivation.js'
import { checkFactsDerivation, checkObligations, type CaptureDecodes } from '../../domain/rules.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import { definedMembers, optional } from '../../optional.js'
import type { Receipt } from './append.js'
import type { ScanResult } from './scan.js'
import { notAppliedFinding, ruleFinding } from './log-checker.js'
import { signatureCheck, type TrustPolicy } from './signatures.js'
import { checkReceipt } from './receipts.js'
import type { VerifyOptions, VerifyReport } from './verify.js'

/** Clocks of writers and verifiers disagree a little: an event up to this far ahead is not "in the future". */
const CLOCK_SKEW_MS = 5 * 60_000

/** The time a verification may hold events up to (now, plus clock skew between machines). */
export const verificationTime = (): number => Date.now() + CLOCK_SKEW_MS

/**
 * What a verification watches while a store scans the log (`scanOptions`, the same for every
 * store): the event at the receipt's seq, the signatures, and the size each object is referenced
 * with (`referenced`; a second size is a finding in `extra`). `report` then judges the scanned log.
 */
export const verifyWatch = (options: VerifyOptions, extra: Finding[]) => {
  const expect = options.expectHead
  const referenced = new Map<string, number>()
  const signatures = signatureCheck({ requireSigned: options.requireSigned === true })
  let atReceipt: string | null = null
  let receiptAt: string | null = null
  const scanOptions = {
    ...optional('rules', options.rules),
    notAfter: verificationTime(),
    onEvent: (e: RecordedEvent): void => {
      if (expect !== undefined && e.seq === expect.seq) [atReceipt, receiptAt] = [e.hash, e.at]
      signatures.feed(e)
      options.onEvent?.(e)
    },
    onRef: (ref: FoundRef, env: EventEnvelope): void => {
      const known = referenced.get(ref.digest)
      if (known === undefined) referenced.set(ref.digest, ref.size)
      else if (known !== ref.size)
        extra.push(
          finding('OBJECT_SIZE_MISMATCH', `${ref.digest} is referenced with sizes ${known} and ${ref.size}`, {
            seq: env.seq,
            data: { digest: ref.digest }
          })
        )
    }
  }
  const report = (
    scan: Parameters<typeof verifyReportOf>[0],
    read: (ref: ObjectRefLite) => Uint8Array | undefined,
    counts: { readonly objects: number; readonly objectBytes: number; readonly logBytes: number }
  ): Promise<VerifyReport> =>
    verifyReportOf(scan, read, extra, expect, atReceipt, {
      ...counts,
      strict: options.strict === true,
      signatures,
      receiptAt,
      ...definedMembers(options, 'trust', 'requireSigned', 'signedHead')
    })
  return { referenced, scanOptions, report }
}

/**
 * The verify report of a checked log, the same for every store: the rules' checks of object
 * contents (through `read`), the receipt, and the store's own findings (`extra`), in a stable order.
 */
const verifyReportOf = async (
  scan: Pick<
    ScanResult,
    'findings' | 'omittedFindings' | 'obligations' | 'notApplied' | 'declaration' | 'seq' | 'hash' | 'eventIds'
  >,
  read: (ref: ObjectRefLite) => Uint8Array | undefined,
  extra: Finding[],
  expect: Receipt | undefined,
  atReceipt: string | null,
  counts: {
    readonly objects: number
    readonly objectBytes: number
    readonly logBytes: number
    readonly strict: boolean
    readonly signatures: ReturnType<typeof signatureCheck>
    readonly trust?: TrustPolicy
    readonly requireSigned?: boolean
    readonly signedHead?: SignedHead
    /** The time of the event at the receipt's seq, when the log holds one. */
    readonly receiptAt?: string | null
  }
): Promise<VerifyReport> => {
  // Both read every capture: decoded once for the two.
  const decodes: CaptureDecodes = new Map()
  const ruleFindings = [
    ...checkObligations(scan.obligations, read, decodes),
    ...checkPrompts(scan.obligations, read, decodes),
    ...(await checkFactsDerivation(scan.obligations, read))
  ]
    .map(ruleFinding)
    .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))
  // A signed head of another case names nothing in this one: its finding is SIGNED_HEAD_OTHER_CASE alone.
  const otherCase = counts.signedHead !== undefined && counts.signedHead.caseId !== scan.declaration?.case_id
  const receipt = checkReceipt(expect, scan, atReceipt, !otherCase)
  extra.push(...receipt.findings)
  const signed = counts.signatures.judge(scan.declaration?.case_id ?? null, counts)
  const asked = counts.trust !== undefined || counts.requireSigned === true || signed.signers.length > 0
  const head =
    counts.signedHead === undefined
      ? undefined
      : judgeSignedHead(
          counts.signedHead,
          scan.declaration?.case_id ?? null,
          counts.trust?.signers ?? [],
          counts.receiptAt == null ? Date.now() : Date.parse(counts.receiptAt)
        )
  const signatureFindings = [...signed.findings, ...(head?.findings ?? [])]
  const notApplied = scan.notApplied.map((n) => notAppliedFinding(n, counts.strict))
  // The causes first (the files, then the lines, then what the rules and signatures judge of them).
  const findings = causeFirst([
    ...scan.findings,
    ...ruleFindings,
    ...signatureFindings,
    ...notApplied,
    ...extra.sort(byPath)
  ])
  return {
    valid: findings.every((f) => !isError(f)) && scan.omittedFindings === 0,
    case_id: scan.declaration?.case_id ?? null,
    generation: scan.seq,
    head: scan.hash === null ? null : { seq: scan.seq, hash: scan.hash },
    events: scan.eventIds,
    objects: counts.objects,
    object_bytes: counts.objectBytes,
    log_bytes: counts.logBytes,
    findings,
    omitted_findings: scan.omittedFindings,
    ...optional('receipt', receipt.receipt),
    ...(asked ? { signatures: { signers: signed.signers, unsigned_commands: signed.unsigned } } : {}),
    ...(head === undefined || counts.signedHead === undefined
      ? {}
      : { signed_head: { case_id: counts.signedHead.caseId, signers: head.signers } })
  }
}

/** Findings in a stable order: by path, code and message. */
export const byPath = (a: Finding, b: Finding): number => {
  const ka = `${a.path ?? ''}\u0000${a.code}\u0000${a.message}`
  const kb = `${b.path ?? ''}\u0000${b.code}\u0000${b.message}`
  return ka < kb ? -1 : ka > kb ? 1 : 0
}
