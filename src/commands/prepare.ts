/**
 * Case preparation: record a revision's raw inputs (a bug report, entity references, attachments),
 * run the configured enrichment once, and complete the revision with its facts, in two atomic
 * commands. A completed revision is never rewritten: new inputs make a new revision; the same
 * inputs again change nothing, unless prepared again (`again`: a new revision, fresh enrichment). Inputs come from memory or from a report file (REPORT.json, an
 * issue exported by gh, Markdown or text: report-formats.ts).
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { decodeEnrichment, EntityRef, type EnrichmentConfig } from '../domain/enrichment-config.js'
import { decideInputs, inputsDigest, type Author } from '../domain/inputs-decider.js'
import { hasLoneSurrogate } from '../domain/answer-decider.js'
import { ReportOrigin } from '../events/catalog.js'
import { parseReportText } from './report-formats.js'
import { describeErrors } from '../events/decode.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import type { Receipt } from '../adapters/case-store/append.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { decodeUtf8, unreadableWhy } from '../adapters/fs-util.js'
import { FailureError, must } from '../failures/error.js'
import { readNamedFile, readRegular } from '../adapters/regular-file.js'
import type { Profile } from '../adapters/config/profile.js'
import { decideAndAppend, deciding, openAt } from './run.js'
import { captureBytes } from '../research/capture.js'
import type { Capture } from '../events/capture.js'
import { CAPTURE_MEDIA_TYPE } from './case-query.js'
import { enrich, type CoverageGap } from '../research/enrich.js'
import { extractEntities, revisionEntities, type ExtractedEntity } from '../domain/extract.js'
import type { ProjectResearch } from '../research/project-research.js'

/** The raw inputs of a revision, in memory. @category investigations */
export interface RevisionInputs {
  /** The bug report as the reporter wrote it. */
  readonly report: string
  /**
   * Entities the report names: `{type: "quest", id: 11117}` (default none: then the report's ids
   * are what extraction finds).
   */
  readonly entities?: ReadonlyArray<EntityRef>
  /** Where the report came from: the address of the issue it was exported from. */
  readonly origin?: string
  /** Files handed in with the report (logs, screenshots), as bytes. */
  readonly attachments?: ReadonlyArray<{
    readonly name: string
    readonly bytes: Uint8Array
    readonly mediaType?: string
  }>
  /**
   * The report's own title, as a report file has it (REPORT.json's `title`, an issue's title, a
   * leading `# ` heading). Not recorded: the case's title is the one `vba case init --title` gave.
   */
  readonly title?: string
}

/**
 * The outcome of preparing a revision: completed (or unchanged for inputs recorded before), with its fact and capture counts.
 * @category investigations
 */
export interface PrepareResult {
  readonly status: 'completed' | 'unchanged'
  readonly revision: number
  readonly facts: number
  readonly captures: number
  readonly complete: boolean
  /** The entities found in the report, with their spans (none when extraction is off). */
  readonly extracted: ReadonlyArray<ExtractedEntity>
  /** What enrichment left out (refused lookups with their codes, partial answers, bounds); empty when unchanged. */
  readonly left_out: ReadonlyArray<CoverageGap>
  /** The earlier revision with the same inputs, when this one prepared them again. */
  readonly again_of: number | null
  readonly generation: number
  readonly receipt: Receipt
}

/** @category investigations */
export interface PrepareOptions {
  readonly env?: Env
  /** Who hands in the inputs (default operator). */
  readonly author?: Author
  /**
   * Find entities in the report with the profile's `[[enrichment.extract]]` patterns (default
   * true); false records none and leaves the patterns out of the recorded settings.
   */
  readonly extract?: boolean
  /**
   * Prepare the same inputs again (default false): when a completed revision holds them, a new
   * revision with fresh enrichment (the earlier one stays as it was).
   */
  readonly again?: boolean
}

const MAX_REPORT_CHARS = 1_000_000
const MAX_ATTACHMENT_BYTES = 64 << 20

/** The [enrichment] section of a profile, decoded. @category investigations */
export const enrichmentConfig = (profile: Profile): E.Either<Failure, EnrichmentConfig> => {
  const raw = profile.raw['enrichment']
  if (raw === undefined)
    return E.left(failure('CONFIG_INVALID', 'the profile has no [enrichment] section (see config/trinitycore.toml)'))
  return decodeEnrichment(raw)
}

const Bytes = new t.Type<Uint8Array, Uint8Array, unknown>(
  'Bytes',
  (u): u is Uint8Array => u instanceof Uint8Array,
  (u, c) => (u instanceof Uint8Array ? t.success(u) : t.failure(u, c, 'expected bytes (a Uint8Array or a Buffer)')),
  t.identity
)

/** The shape of {@link RevisionInputs} (a caller in JavaScript or with parsed JSON gives any value). */
const RevisionInputsShape = t.intersection([
  t.type({ report: t.string }),
  t.partial({
    entities: t.array(EntityRef),
    origin: t.string,
    attachments: t.array(
      t.intersection([t.type({ name: t.string, bytes: Bytes }), t.partial({ mediaType: t.string })])
    ),
    title: t.string
  })
])

/**
 * Checks inputs from anywhere (memory or a file) the same way: first their shape (INPUT_INVALID
 * naming the member), then their content. The inputs themselves are returned, not a copy.
 */
export const checkInputs = (given: unknown): E.Either<Failure, RevisionInputs> => {
  const shape = RevisionInputsShape.decode(given)
  if (E.isLeft(shape)) return E.left(failure('INPUT_INVALID', `the inputs are invalid: ${describeErrors(shape.left)}`))
  const inputs = given as RevisionInputs
  if (inputs.report.trim() === '') return E.left(failure('INPUT_INVALID', 'the report is empty'))
  // Text a person wrote holds no NUL and something visible (a report of 200 NUL bytes is valid UTF-8).
  if (inputs.report.includes('\u0000'))
    return E.left(failure('INPUT_INVALID', 'the report holds NUL characters: it is not text (a binary file?)'))
  if (!/[^\p{Cc}\p{Cf}\p{Z}]/u.test(inputs.report))
    return E.left(failure('INPUT_INVALID', 'the report holds no visible character'))
  if (inputs.report.length > MAX_REPORT_CHARS)
    return E.left(
      failure('INPUT_INVALID', `the report has ${inputs.report.length} characters, over ${MAX_REPORT_CHARS}`)
    )
  if (hasLoneSurrogate(inputs.report))
    return E.left(failure('INPUT_INVALID', 'the report holds lone UTF-16 surrogates (not valid Unicode text)'))
  if (inputs.origin !== undefined && E.isLeft(ReportOrigin.decode(inputs.origin)))
    return E.left(failure('INPUT_INVALID', 'the origin is an http(s) address of at most 2048 characters'))
  if ((inputs.entities ?? []).length > 1000) return E.left(failure('INPUT_INVALID', 'at most 1000 entities'))
  for (const a of inputs.attachments ?? []) {
    if (a.name.trim() === '' || a.name.length > 255 || hasLoneSurrogate(a.name))
      return E.left(failure('INPUT_INVALID', 'an attachment has a name of 1-255 characters'))
    if (a.bytes.byteLength > MAX_ATTACHMENT_BYTES)
      return E.left(
        failure('INPUT_INVALID', `attachment ${a.name} has ${a.bytes.byteLength} bytes, over ${MAX_ATTACHMENT_BYTES}`)
      )
  }
  return E.right(inputs)
}

/**
 * Reads a report file (REPORT.json, an issue exported by gh, Markdown or text, told apart by its
 * shape) and the attachments REPORT.json names. Attachment paths are relative to the file and
 * must stay inside its directory (no absolute paths, no `..`): a report may come from outside.
 * The file is a regular file or a pipe (`--input <(…)`) of at most 8 bytes a character of the
 * report's bound; a larger one, a directory or a device is INPUT_INVALID before it is read whole.
 */
export const readInputs = async (
  file: string,
  options: {
    /**
     * The report is the caller's own regular file, read without following a link (an evaluation
     * suite: shared input, where a link could bring any file the operator can read into a case).
     */
    readonly ownFile?: boolean
  } = {}
): Promise<RevisionInputs> => {
  let text: string
  try {
    const bytes =
      options.ownFile === true
        ? await readRegular(file, { maxBytes: 8 * MAX_REPORT_CHARS + 1, shown: path.basename(file) }).catch(
            (e: unknown) => {
              if (e instanceof FailureError) throw new FailureError(failure('INPUT_INVALID', e.failure.message))
              throw e
            }
          )
        : await readNamedFile(file, {
            maxBytes: 8 * MAX_REPORT_CHARS,
            pipe: true,
            shown: `the report file ${file}`,
            code: 'INPUT_INVALID'
          })
    if (bytes.length > 8 * MAX_REPORT_CHARS)
      throw new FailureError(failure('INPUT_INVALID', `${path.basename(file)} is too large`))
    text = decodeUtf8(bytes, path.basename(file))
    if (text.length > 2 * MAX_REPORT_CHARS)
      throw new FailureError(failure('INPUT_INVALID', `${path.basename(file)} is too large`))
  } catch (e) {
    if (e instanceof FailureError) throw e
    throw new FailureError(failure('INPUT_INVALID', `cannot read ${path.basename(file)}: ${unreadableWhy(e)}`))
  }
  const d = must(parseReportText(text, path.basename(file)))
  const base = path.dirname(path.resolve(file))
  const attachments: Array<{ name: string; bytes: Uint8Array }> = []
  for (const a of d.attachments) {
    const target = path.resolve(base, a.path)
    if (path.isAbsolute(a.path) || a.path.split(/[\\/]/).includes('..') || !target.startsWith(base + path.sep)) {
      throw new FailureError(
        failure(
          'INPUT_INVALID',
          `attachment ${JSON.stringify(a.name.slice(0, 80))}: its path must be relative and inside the directory of the report file`,
          { path: a.path.slice(0, 200) }
        )
      )
    }
    const name = JSON.stringify(a.name.slice(0, 80))
    // Inside the directory as it resolves too: a folder on the way may be a link to elsewhere.
    const real = await fsp.realpath(target).catch(() => null)
    if (real !== null && !real.startsWith((await fsp.realpath(base)) + path.sep))
      throw new FailureError(
        failure(
          'INPUT_INVALID',
          `attachment ${name}: ${JSON.stringify(a.path.slice(0, 200))} leads outside the directory of the report file (a link)`,
          {
            path: a.path.slice(0, 200)
          }
        )
      )
    const st = await fsp.lstat(target).catch(() => null)
    if (st !== null && !st.isFile())
      throw new FailureError(failure('INPUT_INVALID', `attachment ${name} is not a regular file`))
    if (st !== null && st.size > MAX_ATTACHMENT_BYTES)
      throw new FailureError(failure('INPUT_INVALID', `attachment ${name} is over ${MAX_ATTACHMENT_BYTES} bytes`))
    let why = st === null ? 'ENOENT' : ''
    const bytes =
      st === null
        ? null
        : await readRegular(target, { maxBytes: MAX_ATTACHMENT_BYTES }).catch((e: unknown) => {
            why = (e as NodeJS.ErrnoException).code ?? 'error'
            return null
          })
    if (bytes === null)
      throw new FailureError(
        failure('INPUT_INVALID', `cannot read attachment ${name}: ${JSON.stringify(a.path.slice(0, 200))} (${why})`, {
          path: a.path.slice(0, 200)
        })
      )
    attachments.push({ name: a.name, bytes })
  }
  return must(
    checkInputs({
      report: d.report,
      entities: d.entities,
      attachments,
      ...(d.origin === null ? {} : { origin: d.origin }),
      ...(d.title === null ? {} : { title: d.title })
    })
  )
}

/**
 * The settings enrichment runs with and the entities extracted from the report: none (null) when
 * extraction is off or the profile names no patterns, and then the patterns are not recorded.
 */
const extraction = (
  config: EnrichmentConfig,
  inputs: RevisionInputs,
  on: boolean
): { readonly config: EnrichmentConfig; readonly extracted: ExtractedEntity[] | null } => {
  const patterns = config.extract ?? []
  if (on && patterns.length > 0)
    return { config, extracted: extractEntities(inputs.report, patterns, inputs.entities ?? []) }
  const { extract: _off, ...rest } = config
  return { config: rest, extracted: null }
}

/** A capture as the revision's completion records it: its bytes, object reference, kind and request digest. */
const capturedRecord = (capture: Capture) => {
  const bytes = captureBytes(capture)
  return {
    bytes,
    capture: objectRefOf(bytes, CAPTURE_MEDIA_TYPE),
    kind: capture.kind,
    requestDigest: sha256Digest(must(canonicalJson(capture.request)))
  }
}

/**
 * Records `inputs` as a revision of the case at `dir` (or finds the revision that holds them),
 * enriches it with the configured queries and completes it. Left when a provider is unavailable
 * (the recorded inputs stay; running it again continues the same revision).
 */
export const prepareRevision = async (
  at: CaseAt,
  research: ProjectResearch,
  enrichment: EnrichmentConfig,
  given: RevisionInputs,
  options: PrepareOptions = {}
): Promise<PrepareResult> => {
  const env = options.env ?? systemEnv
  must(checkInputs(given))
  // Without entities, none are listed: recorded as the empty list, as a report file without them.
  const inputs = { ...given, entities: given.entities ?? [] }
  const report = Buffer.from(inputs.report, 'utf8')
  const attachments = (inputs.attachments ?? []).map((a) => ({
    name: a.name,
    bytes: a.bytes,
    ref: objectRefOf(a.bytes, a.mediaType)
  }))
  const { config, extracted } = extraction(enrichment, inputs, options.extract ?? true)
  const index = {
    report: objectRefOf(report, 'text/plain'),
    entities: inputs.entities,
    attachments: attachments.map((a) => ({ name: a.name, object: a.ref })),
    origin: inputs.origin ?? null,
    // nothing found: inputs version 1, as before extraction (verify finds nothing either)
    ...(extracted === null || extracted.length === 0 ? {} : { extracted })
  }
  const handle = await openAt(at)
  const state = handle.cursor.state
  const before = state.revisions.map((r) => ({ revision: r.revision, digest: r.inputs_digest }))
  const decided = must(
    decideInputs(state, { author: options.author ?? 'operator', index, again: options.again === true })
  )
  const revision = decided.revision
  const digest = state.revisions.find((r) => r.revision === revision)?.inputs_digest ?? must(inputsDigest(index))
  const again_of = before.filter((r) => r.revision < revision && r.digest === digest).pop()?.revision ?? null
  if (decided.status === 'existing' && decided.completed) {
    const r = handle.cursor.state.revisions.find((x) => x.revision === revision)
    return {
      status: 'unchanged' as const,
      revision,
      facts: r?.fact_count ?? 0,
      captures: r?.captures ?? 0,
      complete: r?.complete ?? false,
      extracted: r?.extracted ?? [],
      left_out: [],
      again_of,
      generation: handle.cursor.seq,
      receipt: { seq: handle.cursor.seq, hash: handle.cursor.hash }
    }
  }
  if (decided.status === 'new') {
    await decideAndAppend(
      handle,
      `prepare-r${revision}-inputs`,
      () => E.right({ events: decided.events, objects: [report, ...attachments.map((a) => a.bytes)] }),
      { env }
    )
  }
  const result = must(await enrich(research, config, revisionEntities(inputs.entities, extracted ?? [])))
  const captures = result.captures.map(capturedRecord)
  const factsBytes = Buffer.from(
    must(canonicalJson({ format: 'vba-facts', version: 1, revision, facts: result.facts })),
    'utf8'
  )
  const factsRef = objectRefOf(factsBytes, 'application/vnd.vba.facts+json')
  // The enrichment settings are recorded with the facts, so verify can derive the facts again.
  const settingsBytes = Buffer.from(must(canonicalJson(config)), 'utf8')
  const settingsRef = objectRefOf(settingsBytes, 'application/vnd.vba.enrichment+json')
  const objects = [
    ...new Map([...captures.map((c) => c.bytes), factsBytes, settingsBytes].map((b) => [sha256Digest(b), b])).values()
  ]
  const completion = {
    revision,
    captures,
    facts: factsRef,
    factCount: result.facts.length,
    complete: result.complete,
    binding: research.binding,
    enrichment: settingsRef
  }
  const done = await decideAndAppend(
    handle,
    `prepare-r${revision}-enrich`,
    deciding('CompleteRevision', completion, objects),
    { env }
  )
  return {
    status: 'completed' as const,
    revision,
    facts: result.facts.length,
    captures: result.captures.length,
    complete: result.complete,
    extracted: extracted ?? [],
    left_out: result.facts.flatMap((f) => (f.type === 'project_context_coverage' ? f.left_out : [])),
    again_of,
    generation: done.generation,
    receipt: done.receipt
  }
}
