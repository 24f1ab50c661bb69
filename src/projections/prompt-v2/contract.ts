/**
 * The stable part of a version-2 prompt: the role, the answer contract and the query contract
 * (the kinds the investigation may ask, the databases with their allowed tables, the limits of one
 * query, where code lives, the source.context settings and ranking, the working memory and how
 * refusals count, the budget). Everything comes from the settings the start recorded, so it is
 * byte-identical across the turns of one investigation and model providers can cache it.
 */
import type { CaseState } from '../../domain/case-state.js'
import type { QueryContract } from '../../events/settings.js'
import { QUERY_KIND_DEFINITIONS } from '../query-kinds/catalog.js'
import { signatureOf, type QueryNeeds } from '../query-kinds/define.js'
import { ANSWER_CONTRACT } from '../prompt-v1/render.js'

export const PROMPT_VERSION_V2 = 'investigation_project_v2'

/** Characters of table names listed per database; the rest is named by count (database.tables lists them). */
export const TABLES_MAX_CHARS = 1500

/** The signatures of the kinds that need `needs`, in the catalog's order (with their search options when recorded). */
const signatures = (needs: QueryNeeds, withOptions: boolean): string[] =>
  Object.values(QUERY_KIND_DEFINITIONS)
    .filter((d) => d.needs === needs)
    .map((d) => signatureOf(d as (typeof QUERY_KIND_DEFINITIONS)[keyof typeof QUERY_KIND_DEFINITIONS], withOptions))

/** What starts that record `search_options` say of searches. */
export const SEARCH_OPTIONS_LINE =
  'Searches: exact case, identifiers as words, unless ignore_case/whole_number; few hits add "missed" (other case, in longer words; not hits).'

/** Names joined while they fit `max` characters; the rest counted. */
const bounded = (names: readonly string[], max: number): string => {
  const shown: string[] = []
  let used = 0
  for (const n of names) {
    if (used + n.length + 2 > max) break
    shown.push(n)
    used += n.length + 2
  }
  return shown.length === names.length
    ? names.join(', ')
    : `${shown.join(', ')} … and ${names.length - shown.length} more (database.tables lists them)`
}

const contractLines = (c: QueryContract): string[] => {
  const out: string[] = []
  if (c.source !== null && c.source.code_path_prefixes.length > 0) {
    const [first] = c.source.code_path_prefixes
    out.push(
      `Code is under ${c.source.code_path_prefixes.join(', ')}; other paths may hold data dumps (.sql): path_prefix ${JSON.stringify(first)} searches code only.`
    )
  }
  const absent = new Map((c.snapshot?.absent_tables ?? []).map((a) => [a.name, new Set(a.tables)]))
  if (c.databases.length > 0) {
    out.push('Allowed tables (no other table can be read; columns: database.schema):')
    for (const d of c.databases) {
      const gone = absent.get(d.name) ?? new Set<string>()
      const held = d.allowed_tables.filter((t) => !gone.has(t))
      out.push(`  ${d.name}: ${held.length === 0 ? 'none' : bounded(held, TABLES_MAX_CHARS)}`)
      if (gone.size > 0)
        out.push(
          `  ${d.name}, allowed but absent from this snapshot (a query is refused): ${bounded([...gone], TABLES_MAX_CHARS)}`
        )
    }
  }
  // Starts that checked the snapshot also say what no query reaches and when a conclusion is accepted.
  if (c.snapshot !== undefined) {
    if (c.snapshot.not_reachable.length > 0)
      out.push(
        `No query reaches: ${c.snapshot.not_reachable.join('; ')}. What depends on it is a hypothesis or a lab test.`
      )
    out.push(
      'A conclusion is accepted when every hypothesis and evidence id it cites exists, whatever the status of its hypotheses (an open one too); it ends the investigation.'
    )
  }
  const l = c.limits
  out.push(
    `Limits per query: source.read ${l.max_lines} lines (max_lines); database.rows ${l.max_rows} rows (max_rows) and ${l.max_result_bytes} bytes; searches ${l.max_matches} hits in ${l.max_files} files; lines cut at ${l.max_line_chars} characters; ${l.max_filters} filters, ${l.max_in_values} "in" values, ${l.max_columns} columns.`
  )
  return out
}

/**
 * Stable parts by settings object: the settings are replaced, never changed, and verify renders
 * every prompt of an investigation again.
 */
const stableBySettings = new WeakMap<object, string>()

/** The stable part: identical for every turn of one investigation. */
export const stablePartV2 = (s: CaseState): string => {
  const st = s.settings
  if (st === null) return stableText(s)
  let text = stableBySettings.get(st)
  if (text === undefined) {
    text = stableText(s)
    stableBySettings.set(st, text)
  }
  return text
}

/** The stable part, made from the settings (the only part of the state it reads). */
const stableText = (s: CaseState): string => {
  const st = s.settings
  const ctx = st?.source_context ?? null
  const c = st?.contract ?? null
  // the search options and their words, for starts that record them and have a source to search
  const options = st?.search_options === true && (c === null || c.source !== null)
  const kinds = [
    ...(c === null || c.source !== null ? signatures('source', options) : []),
    ...(c === null || c.databases.length > 0 ? signatures('database', options) : []),
    ...(ctx === null ? [] : signatures('source_context', options))
  ]
  return [
    `=== ${PROMPT_VERSION_V2} ===`,
    ...ANSWER_CONTRACT,
    'project.query kinds (read-only; the pinned commit and the allowed tables only):',
    // two kinds a line: the list stays readable and short
    ...kinds.flatMap((k, i) =>
      i % 2 === 0 ? [`  ${[k, kinds[i + 1]].filter((x) => x !== undefined).join('; ')}`] : []
    ),
    ...(c === null ? [] : contractLines(c)),
    'database filters: {column, operator: eq|ne|lt|le|gt|ge|contains|in, value}; joined with AND.',
    'Results: source lines "123| text" under their file (">" a hit of the term, "+" a followed name, "~" the same name elsewhere); rows "a|b" under "column (type)" (NULL is NULL; quoted text is JSON).',
    'A lexical hit proves no definition, registration or executed call; equal numbers or names may mean different things.',
    ...(options ? [SEARCH_OPTIONS_LINE] : []),
    ...(ctx === null
      ? []
      : [
          `source.context (context_lines ${ctx.context_lines}, max_searches ${ctx.max_searches}, max_matches ${ctx.max_matches}, max_files ${ctx.max_files}, max_blocks ${ctx.max_blocks}, max_total_lines ${ctx.max_total_lines}, registrations ${ctx.registration_prefixes.join(',')}) ranks before it cuts: direct hits, the alias in its own file, registration functions, loader lines, same names elsewhere. Use it before source.search and source.read.`
        ]),
    options
      ? 'Prompts show the evidence open hypotheses cite and your latest results (older: a line each); an identical query again is free.'
      : 'Each prompt shows the evidence your open hypotheses cite and your latest results; older evidence one line each. An identical query again shows its evidence again, free.',
    ...(st?.count_refusals === true
      ? [
          `Refused or repeated queries count like invalid answers: ${st.max_invalid_responses} in a row block the investigation.`
        ]
      : []),
    `Budget: ${st?.budget_total ?? 0} units; project.query costs ${st?.action_costs['project.query'] ?? 1}.`,
    '=== end of contract ==='
  ].join('\n')
}
