/**
 * Entities from the report: a deterministic extractor over the report's text, configured by the
 * profile's `[[enrichment.extract]]` patterns (the core knows no game; config/trinitycore.toml
 * ships database-site links, GM commands and labels). Each pattern has one capture group, the
 * entity's number; the whole match is the entity's provenance (its span of the report, in UTF-16
 * code units as JavaScript strings count them). A bare number is never given a type: a pattern
 * that matches one is refused. Listed entities win: an extracted entity whose number a listed
 * entity already names is left out. Pure: verify runs it again over the recorded report.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
// The type only: importing the codec would evaluate the preparation events' codecs and the event
// registry in every process that reads a profile.
import type { ExtractedEntity } from '../events/revision-events.js'

export type { ExtractedEntity }

/** An entity as the inputs name it. */
type EntityRef = { readonly type: string; readonly id: number | string }

/** One extraction pattern: the entity type it gives, a regular expression with one capture group (the number), and what kind of mention it is. @category investigations */
export const ExtractPattern = t.intersection(
  [
    t.type({ type: t.string, pattern: t.string }),
    t.partial({ kind: t.keyof({ link: null, command: null, label: null }), ignore_case: t.boolean })
  ],
  'ExtractPattern'
)
export type ExtractPattern = t.TypeOf<typeof ExtractPattern>

/** At most this many distinct entities are taken from one report (the first ones). */
export const MAX_EXTRACTED = 100
const MAX_ID_DIGITS = 10

const compile = (p: ExtractPattern): RegExp => new RegExp(p.pattern, p.ignore_case === true ? 'gi' : 'g')

/** Why a pattern cannot be used (does not compile, not one capture group, matches a bare number), or null. */
export const patternProblem = (p: ExtractPattern): string | null => {
  let re: RegExp
  try {
    re = compile(p)
  } catch {
    return `pattern ${JSON.stringify(p.pattern)} is not a regular expression`
  }
  const groups = (new RegExp(`${p.pattern}|`).exec('')?.length ?? 1) - 1
  if (groups !== 1)
    return `pattern ${JSON.stringify(p.pattern)} has ${groups} capture groups; it has exactly one, the number`
  for (const bare of ['12345', ' 12345 ', '12345.']) {
    re.lastIndex = 0
    if (re.test(bare))
      return `pattern ${JSON.stringify(p.pattern)} matches a bare number (${JSON.stringify(bare)}); a bare number is never given a type`
  }
  if (p.type.trim() === '') return 'an extraction pattern names its entity type'
  return null
}

/** Checks every pattern; the first problem as CONFIG_INVALID. */
export const checkPatterns = (patterns: readonly ExtractPattern[]): E.Either<Failure, readonly ExtractPattern[]> => {
  for (const [i, p] of patterns.entries()) {
    const why = patternProblem(p)
    if (why !== null) return E.left(failure('CONFIG_INVALID', `[enrichment] extract[${i}]: ${why}`))
  }
  return E.right(patterns)
}

/**
 * The entities `report` mentions, by the patterns in order: a match overlapping one taken before is
 * skipped, each type and number is taken once (its first mention), a number no listed entity names.
 */
export const extractEntities = (
  report: string,
  patterns: readonly ExtractPattern[],
  listed: readonly EntityRef[] = []
): ExtractedEntity[] => {
  const taken: Array<{ start: number; end: number }> = []
  const found: ExtractedEntity[] = []
  for (const p of patterns) {
    if (patternProblem(p) !== null) continue
    const re = compile(p)
    for (const m of report.matchAll(re)) {
      const digits = m[1]
      const start = m.index ?? 0
      const end = start + m[0].length
      if (digits === undefined || !/^[0-9]+$/.test(digits) || digits.length > MAX_ID_DIGITS || m[0].length === 0)
        continue
      if (taken.some((s) => start < s.end && s.start < end)) continue
      taken.push({ start, end })
      found.push({ type: p.type, id: Number(digits), span: { start, end }, text: m[0], kind: p.kind ?? 'mention' })
    }
  }
  found.sort((a, b) => a.span.start - b.span.start)
  const listedIds = new Set(listed.map((x) => String(x.id)))
  const seen = new Set<string>()
  const out: ExtractedEntity[] = []
  for (const x of found) {
    const key = `${x.type}|${x.id}`
    if (listedIds.has(String(x.id)) || seen.has(key)) continue
    seen.add(key)
    out.push(x)
    if (out.length === MAX_EXTRACTED) break
  }
  return out
}

/**
 * The numbers of 3 to 10 digits in `report` that no extracted entity covers (not part of a word,
 * a path, a version, a time or a date), distinct, in order, at most `max`: ids a pattern did not
 * recognise, for the operator to name (a bare number is never given a type).
 */
export const untypedNumbers = (
  report: string,
  extracted: ReadonlyArray<{ readonly span: { readonly start: number; readonly end: number } }>,
  max = 10,
  typed: ReadonlySet<string> = new Set()
): string[] => {
  const out: string[] = []
  for (const m of report.matchAll(/(?<![\w.:/#=-])[0-9]{3,10}(?![\w:/-]|\.[0-9])/g)) {
    const at = m.index ?? 0
    if (typed.has(m[0]) || extracted.some((x) => at < x.span.end && x.span.start < at + m[0].length)) continue
    if (!out.includes(m[0])) out.push(m[0])
    if (out.length === max) break
  }
  return out
}

/** The entities enrichment resolves: the listed ones first, then the extracted ones. */
export const revisionEntities = (listed: readonly EntityRef[], extracted: readonly ExtractedEntity[]): EntityRef[] => [
  ...listed,
  ...extracted.map((x) => ({ type: x.type, id: x.id }))
]

/** Where in the report an extracted entity was found: `link "quest=10911" at characters 120-131 of the report`. */
export const whereText = (x: ExtractedEntity): string =>
  `${x.kind} ${JSON.stringify(x.text.length > 60 ? `${x.text.slice(0, 59)}…` : x.text)} at characters ${x.span.start}-${x.span.end} of the report`

/** An extracted entity and where it came from, in words: `quest 10911: link "quest=10911" at characters 120-131 of the report`. */
export const provenanceText = (x: ExtractedEntity): string => `${x.type} ${x.id}: ${whereText(x)}`

/** Where each entity of a revision came from: listed by the operator, or found in the report (with its provenance). @category investigations */
export interface EntitySource {
  readonly type: string
  readonly id: number | string
  readonly source: 'listed' | 'report'
  /** For an entity found in the report: where, in words. */
  readonly where?: string
}

/** The sources of a revision's entities (its listed entities first, then the extracted ones). */
export const entitySources = (revision: {
  readonly entities: readonly EntityRef[]
  readonly extracted?: readonly ExtractedEntity[]
}): EntitySource[] => {
  const extracted = revision.extracted ?? []
  const listed = revision.entities.slice(0, revision.entities.length - extracted.length)
  return [
    ...listed.map((x) => ({ type: x.type, id: x.id, source: 'listed' as const })),
    ...extracted.map((x) => ({ type: x.type, id: x.id, source: 'report' as const, where: whereText(x) }))
  ]
}
