/**
 * `vba export`, `vba import`, and bag verification for `vba verify`: through the public client,
 * except a bag's evidence re-derived with `--against` (the bag unpacked and verified again for it).
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { withVerifiedPackage, type BagCheck } from '../adapters/bagit/import.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'
import { againstProfile, receiptOption, renderVerifyReport, type Out } from './case-verbs.js'
import { CliExit, EXIT, progressBar, refuseStdoutName, terminalText } from './io.js'
import { optional } from '../optional.js'
import { jsonLine } from './json-line.js'
import { cliClient, storeUrl, type StoreOption } from './stores.js'
import { trustOf } from './trust.js'
import { errnoOf } from '../adapters/fs-util.js'
import type { TrustOptions } from './options.js'

export const exportVerb = async (
  io: Out,
  ref: string,
  out: string,
  opts: { dir?: boolean; force?: boolean } & StoreOption
): Promise<void> => {
  refuseStdoutName(out)
  const vba = await cliClient(storeUrl(opts))
  const bar = progressBar('export')
  const r = await vba.transport.export(ref, out, {
    format: opts.dir === true ? 'dir' : 'tar',
    force: opts.force === true,
    onProgress: bar.update
  })
  bar.stop()
  io.out(
    `exported case ${r.case_id} at generation ${r.generation}: ${r.files} payload files, ${r.payload_bytes} bytes${r.archive_sha256 === null ? '' : `; archive sha256 ${r.archive_sha256}`}`
  )
}

export const importVerb = async (
  io: Out,
  archive: string,
  dir: string,
  o: { readonly strict?: boolean } & TrustOptions = {}
): Promise<void> => {
  const vba = await cliClient(undefined)
  const trust = await trustOf(o)
  const bar = progressBar('import')
  const r = await vba.transport
    .import(archive, dir, {
      onProgress: bar.update,
      ...optional('strict', o.strict),
      ...trust
    })
    .finally(() => bar.stop())
  for (const w of r.check.bag.findings) io.err(terminalText(`vba: warning ${w.code}: ${w.message}`))
  io.out(terminalText(`imported case ${r.case_id ?? '?'} at generation ${r.generation} into ${dir}`))
}

/** True when `target` is a bag (a directory with bagit.txt) or a file (an archive). */
export const isBagTarget = async (target: string): Promise<boolean> => {
  try {
    const st = await fsp.stat(target)
    if (st.isFile()) return true
    await fsp.access(path.join(target, 'bagit.txt'))
    return true
  } catch (e) {
    // A missing archive is one (ARCHIVE_NOT_FOUND, as import says), not a missing case directory.
    return errnoOf(e) === 'ENOENT' && /\.tar$/i.test(target)
  }
}

const renderBagCheck = (c: BagCheck): string[] => {
  const lines = [
    `bag: BagIt ${c.bag.version ?? '?'}, ${c.bag.payload.files} payload files, ${c.bag.payload.bytes} bytes: bag ${c.bag.valid ? 'VALID' : 'INVALID'}`
  ]
  for (const f of c.bag.findings)
    lines.push(
      terminalText(
        `  ${f.severity === 'error' ? 'error  ' : 'warning'} ${f.code}${f.path === undefined ? '' : ` (${f.path})`}: ${f.message}`
      )
    )
  if (c.case !== null) lines.push(...renderVerifyReport(c.case, 'case '))
  else if (c.bag.valid) lines.push('data/ is not a case package')
  if (c.canonical_archive === false)
    lines.push('  error   ARCHIVE_NOT_CANONICAL: the archive differs from the canonical archive of its content')
  lines.push(
    c.valid
      ? 'VALID: the bag and the case in it'
      : `INVALID: ${[!c.bag.valid ? 'the bag' : null, c.case !== null && !c.case.valid ? 'the case' : null, c.canonical_archive === false ? 'the archive' : null].filter((x) => x !== null).join(', ') || 'see above'}`
  )
  return lines
}

export const verifyBagVerb = async (
  io: Out,
  target: string,
  opts: { json?: boolean; expectHead?: string; against?: string; strict?: boolean } & TrustOptions
): Promise<void> => {
  const vba = await cliClient(undefined)
  const checked = await vba.transport.verify(target, {
    ...(await receiptOption(opts.expectHead)),
    ...optional('strict', opts.strict),
    ...(await trustOf(opts))
  })
  // With --against, the bag's case (verified again as it is unpacked) has its evidence re-derived.
  const c =
    opts.against === undefined || checked.case === null || !checked.valid
      ? checked
      : await bagAgainst(checked, target, opts.against)
  const valid = c.valid
  if (opts.json === true) {
    for (const f of c.bag.findings) io.out(jsonLine({ bag_finding: f }))
    for (const f of c.case?.findings ?? []) io.out(jsonLine({ finding: f }))
    io.out(
      jsonLine({
        summary: {
          valid,
          bag_valid: c.bag.valid,
          case_valid: c.case?.valid ?? null,
          canonical_archive: c.canonical_archive,
          case_id: c.case?.case_id ?? null,
          generation: c.case?.generation ?? null,
          ...(c.case?.evidence === undefined ? {} : { evidence: c.case.evidence }),
          ...(c.case?.signatures === undefined ? {} : { signatures: c.case.signatures }),
          ...(c.case?.receipt === undefined ? {} : { receipt: c.case.receipt })
        }
      })
    )
  } else for (const l of renderBagCheck(c)) io.out(l)
  if (!valid) throw new CliExit(EXIT.FINDINGS)
}

/** The bag's case with its evidence re-derived (the bag is unpacked and verified again for it). */
const bagAgainst = async (checked: BagCheck, target: string, profile: string): Promise<BagCheck> => {
  const report = await withVerifiedPackage(target, (dir) => againstProfile(checked.case as VerifyReport, dir, profile))
  return { ...checked, case: report, valid: checked.valid && report.valid }
}
