/**
 * Reading a case of the SQL store: open (chain and rules checked, the state folded), verify (the
 * same checks as a directory, every object read back and hashed), replay (projections over the
 * stored lines), the view a bag is exported from, and recorded outcomes of command ids.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import { canonicalJson, sha256Digest } from '../../events/canonical.js'
import type { Head } from '../../events/envelope.js'
import { finding, type Finding } from '../../events/findings.js'
import { objectPath } from '../../events/refs.js'
import type { AnyProjection } from '../../projections/projection.js'
import { fail, FailureError } from '../../failures/error.js'
import type { AppendOutcome } from '../case-store/append.js'
import { handleFromScan, type CaseHandle } from '../case-store/handle.js'
import { replayScan, type ReplayResult } from '../case-store/replay.js'
import type { VerifyOptions, VerifyReport } from '../case-store/verify.js'
import { verifyWatch } from '../case-store/verify-report.js'
import { viewOf, type CaseView } from '../bagit/case-bag.js'
import type { SqlContext } from './connection.js'
import { buf, caseRow, num, PAGE_ROWS, recordedEvents } from './rows.js'
import { scanRows } from './scan-rows.js'
import { obligationRefs } from '../../domain/rules.js'
import { storeConsistency } from './consistency.js'

/** Opens a case for deciding and appending. */
export const openInStore = async (ctx: SqlContext, caseId: string): Promise<CaseHandle> => {
  const { row, scan } = await ctx.guard(async () => {
    const row = await caseRow(ctx, ctx.k, caseId, false)
    return { row, scan: await scanRows(ctx.k, row, { canonical: false }) }
  })
  const h = handleFromScan(row.case_id, scan, ctx.store())
  if ('_tag' in h) throw new FailureError(h)
  return h
}

/** The recorded outcome of a command id the handle has seen. */
export const recordedInStore = async (
  ctx: SqlContext,
  handle: CaseHandle,
  commandId: string
): Promise<AppendOutcome | null> => {
  const span = handle.cursor.commands.get(commandId)
  if (span === undefined) return null
  const events = await ctx.guard(() => recordedEvents(ctx.k, handle.ref, span))
  const last = events[events.length - 1]
  return {
    status: 'duplicate',
    commandId,
    events,
    generation: handle.cursor.seq,
    receipt:
      last === undefined ? { seq: handle.cursor.seq, hash: handle.cursor.hash } : { seq: last.seq, hash: last.hash },
    repairs: []
  }
}

export const readObjectInStore = (ctx: SqlContext, object: ObjectRefLite): Promise<Buffer> =>
  ctx.guard(() => ctx.objects.read(ctx.k, object))

/** Verifies a stored case: chain, rules, and every referenced object read back and hashed. */
export const verifyInStore = async (
  ctx: SqlContext,
  caseId: string,
  options: VerifyOptions = {}
): Promise<VerifyReport> =>
  ctx.guard(async () => {
    const row = await caseRow(ctx, ctx.k, caseId, false)
    const extra: Finding[] = []
    const watch = verifyWatch(options, extra)
    const { referenced } = watch
    const scan = await scanRows(ctx.k, row, watch.scanOptions)
    options.onProgress?.('log', row.log_bytes, row.log_bytes)
    // What the store keeps beside the log must agree with it.
    extra.push(...(await storeConsistency(ctx.k, caseId, row.generation, scan.commands, scan.state)))
    // Every referenced object is read back and hashed; the obligations' objects are kept for the rules.
    const wanted = new Set<string>()
    for (const ob of scan.obligations) for (const ref of obligationRefs(ob)) wanted.add(ref.digest)
    const kept = new Map<string, Buffer>()
    const digests = [...referenced.keys()].sort()
    let objectBytesTotal = 0
    let present = 0
    for (let i = 0; i < digests.length; i += 100) {
      const batch = digests.slice(i, i + 100)
      const found = await ctx.objects.readMany(ctx.k, batch)
      for (const digest of batch) {
        const rel = objectPath(digest)
        const bytes = found.get(digest)
        if (bytes === undefined) {
          extra.push(
            finding('OBJECT_MISSING', `referenced object ${digest} is missing`, { path: rel, data: { digest } })
          )
          continue
        }
        present++
        objectBytesTotal += bytes.length
        if (sha256Digest(bytes) !== digest)
          extra.push(
            finding('OBJECT_DIGEST_MISMATCH', `${rel} does not hash to its name`, { path: rel, data: { digest } })
          )
        else if (bytes.length !== referenced.get(digest))
          extra.push(
            finding(
              'OBJECT_SIZE_MISMATCH',
              `${rel} has ${bytes.length} bytes, referenced with ${String(referenced.get(digest))}`,
              { path: rel, data: { digest } }
            )
          )
        else if (wanted.has(digest)) kept.set(digest, bytes)
      }
      options.onProgress?.('objects', Math.min(i + 100, digests.length), digests.length)
    }
    const read = (ref: ObjectRefLite): Buffer | undefined => {
      const b = kept.get(ref.digest)
      return b !== undefined && b.length === ref.size ? b : undefined
    }
    return watch.report(scan, read, { objects: present, objectBytes: objectBytesTotal, logBytes: scan.bytes })
  })

/** Folds the projections over the stored log. */
export const replayInStore = async (
  ctx: SqlContext,
  caseId: string,
  projections: readonly AnyProjection[]
): Promise<ReplayResult> =>
  ctx.guard(async () => {
    const row = await caseRow(ctx, ctx.k, caseId, false)
    return replayScan(projections, (onEvent) => scanRows(ctx.k, row, { onEvent, canonical: false }))
  })

/** The case as a package at its head (one transaction: head, log and objects of one generation). */
export const viewInStore = async (ctx: SqlContext, caseId: string): Promise<CaseView> =>
  ctx.guard(async () =>
    ctx.k.transaction(async (trx) => {
      const row = await caseRow(ctx, trx, caseId, false)
      const lines: Buffer[] = []
      let after = 0
      for (;;) {
        const rows = (await trx('vba_events')
          .select('seq', 'line')
          .where('case_id', caseId)
          .andWhere('seq', '>', after)
          .andWhere('seq', '<=', row.generation)
          .orderBy('seq')
          .limit(PAGE_ROWS)) as Array<Record<string, unknown>>
        for (const r of rows) {
          lines.push(buf(r['line']), Buffer.from('\n'))
          after = num(r['seq'])
        }
        if (rows.length < PAGE_ROWS) break
      }
      const head = canonicalJson({ seq: row.generation, hash: row.head_hash, bytes: row.log_bytes } satisfies Head)
      if (E.isLeft(head)) return fail('INTERNAL_ERROR', 'HEAD is not canonicalisable')
      // Objects are read in chunks while the bag is written: one chunk in memory, not the object.
      return viewOf(Buffer.from(`${head.right}\n`), row.declaration, Buffer.concat(lines), (_rel, digest, size) => ({
        stream: () => ctx.objects.chunks(ctx.k, digest, size)
      }))
    })
  )
