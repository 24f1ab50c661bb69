/**
 * The facts index of a version-2 prompt: one entry per fact of the prepared revision, never cut
 * silently. Values are shown whole up to VALUE_MAX_CHARS and template texts up to TEXT_MAX_CHARS;
 * a longer one ends in an explicit marker with its full length (outside the quotes, so a cut text
 * never looks whole). The coverage lists every item enrichment left out, with its failure code.
 * The index shows at most `maxChars` characters of entries; the entries after that are named by
 * their ids and count (their rows stay reachable: asking an enrichment query again shows it).
 */
import type { CoverageGap, Fact } from '../../domain/facts-document.js'
import { cell, requestText } from '../request-text.js'
import { counted, type Wording } from '../query-kinds/parts.js'

/** Characters of one value of an entity fact shown whole. */
export const VALUE_MAX_CHARS = 300
/** Characters of one template text shown whole. */
export const TEXT_MAX_CHARS = 1500
/** Characters of fact entries the index shows (the rest is named by id range and count). */
export const FACTS_MAX_CHARS = 6000

const cutMark = (shown: number, total: number): string => `…[cut at ${shown} of ${total} characters]`

/** A value whole, or its first VALUE_MAX_CHARS characters and a marker with its length. */
const valueText = (v: unknown): string => {
  const text = cell(v)
  return text.length <= VALUE_MAX_CHARS
    ? text
    : `${text.slice(0, VALUE_MAX_CHARS)}${cutMark(VALUE_MAX_CHARS, text.length)}`
}

const quoted = (text: string, max: number): string =>
  text.length <= max ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, max))}${cutMark(max, text.length)}`

const gapText = (g: CoverageGap): string => {
  const asked = g.request === undefined ? '' : `: ${requestText(String(g.request['kind']), g.request)}`
  const why = [
    g.reason,
    ...(g.code === undefined ? [] : [g.code]),
    ...(g.count === undefined ? [] : [`${g.count} more`])
  ].join(', ')
  const detail = g.detail === undefined ? '' : `: ${g.detail}`
  const line = `    - ${g.what}${asked} (${why})${detail}`
  return line.length <= VALUE_MAX_CHARS * 2
    ? line
    : `${line.slice(0, VALUE_MAX_CHARS * 2)}${cutMark(VALUE_MAX_CHARS * 2, line.length)}`
}

/** The lines of one fact (the coverage has one line per item left out), its counts worded as `w` says. */
export const factEntry = (f: Fact, w: Wording = 'exact'): string[] => {
  switch (f.type) {
    case 'entity': {
      const values = Object.entries(f.values)
        .map(([k, v]) => `${k}=${valueText(v)}`)
        .join(', ')
      const texts = Object.entries(f.texts)
        .map(([c, id]) => `${c}→${id}`)
        .join(', ')
      return [
        `  ${f.fact_id} ${f.entity_type} ${f.id} (${f.table}): ${values}${texts === '' ? '' : `; texts: ${texts}`}`
      ]
    }
    case 'project_description':
      return [
        `  ${f.fact_id} ${f.role} of ${f.entity_type} ${f.id} (${f.column}, template text): ${quoted(f.text, TEXT_MAX_CHARS)}`
      ]
    case 'relationship':
      return [
        `  ${f.fact_id} ${f.relation}: ${f.from.table}.${f.from.column}=${valueText(f.from.value)}${f.from.id === undefined ? '' : ` (row ${valueText(f.from.id)})`} → ${f.to.table}.${f.to.column} (${counted(w, f.to.rows, 'row')}${f.to.complete ? '' : ', not all fetched'})`
      ]
    case 'source_symbol':
      return [
        `  ${f.fact_id} ${f.relation}: symbol ${f.symbol} has ${counted(w, f.hits, 'hit')} in the source${f.path_prefix === null ? '' : ` under ${f.path_prefix}`}${f.complete ? '' : ' (partial search)'}`
      ]
    case 'not_found':
      return [`  ${f.fact_id} not found: ${f.table}.${f.column}=${valueText(f.value)} (about this table only)`]
    case 'project_context_coverage':
      return f.complete
        ? [`  ${f.fact_id} coverage: nothing left out (${counted(w, f.queries_run, 'query')})`]
        : [
            `  ${f.fact_id} coverage: partial (${counted(w, f.queries_run, 'query')}); left out:`,
            ...f.left_out.map(gapText),
            ...(f.cycles_cut.length === 0 ? [] : [`    cycles cut: ${f.cycles_cut.length}`])
          ]
    default: {
      const _never: never = f
      return [JSON.stringify(_never)]
    }
  }
}

/** Lines joined with LF (null: no lines) and their size, characters plus one LF per line. */
export interface LinesRun {
  readonly text: string | null
  readonly size: number
}

/** The index's lines and its run, made once per facts array, limit and wording. */
const known = (facts: readonly Fact[], maxChars: number, w: Wording): { lines: readonly string[]; run: LinesRun } => {
  let byKey = indexed.get(facts)
  if (byKey === undefined) {
    byKey = new Map()
    indexed.set(facts, byKey)
  }
  const key = `${w} ${maxChars}`
  let made = byKey.get(key)
  if (made === undefined) {
    const lines = indexOf(facts, maxChars, w)
    made = { lines, run: { text: lines.join('\n'), size: lines.reduce((n, l) => n + l.length + 1, 0) } }
    byKey.set(key, made)
  }
  return made
}

/**
 * The facts index: a header, the entries that fit `maxChars`, and a marker naming the rest.
 * Empty when there are no facts.
 */
export const factsIndex = (facts: readonly Fact[], maxChars = FACTS_MAX_CHARS, w: Wording = 'exact'): string[] =>
  facts.length === 0 ? [] : [...known(facts, maxChars, w).lines]

/** The facts index as one run (see LinesRun): what a prompt is made of. */
export const factsIndexRun = (facts: readonly Fact[], maxChars = FACTS_MAX_CHARS, w: Wording = 'exact'): LinesRun =>
  facts.length === 0 ? { text: null, size: 0 } : known(facts, maxChars, w).run

/**
 * Indexes by facts array, limit and wording: a revision's facts are decoded once and never
 * changed, and every prompt of an investigation shows the same index.
 */
const indexed = new WeakMap<readonly Fact[], Map<string, { lines: readonly string[]; run: LinesRun }>>()

const indexOf = (facts: readonly Fact[], maxChars: number, w: Wording): string[] => {
  const out = ['Facts of the prepared revision (context with provenance, not a diagnosis):']
  let used = 0
  for (const [i, f] of facts.entries()) {
    const entry = factEntry(f, w)
    const size = entry.reduce((n, l) => n + l.length + 1, 0)
    if (used + size > maxChars) {
      const rest = facts.slice(i)
      out.push(
        `  [facts ${rest[0]?.fact_id ?? ''}–${rest[rest.length - 1]?.fact_id ?? ''} (${rest.length} of ${facts.length}) are not listed: the index shows ${maxChars} characters; the case holds them, and asking an enrichment query again shows its rows]`
      )
      break
    }
    out.push(...entry)
    used += size
  }
  return out
}
