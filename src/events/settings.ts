/**
 * What an investigation is fixed to at its start, as events record it: the binding of its
 * research (repository and commit, world database and snapshot) and its settings in every
 * recorded version (upcast to the current one), the query contract included.
 */
import * as t from 'io-ts'
import { CommitId } from './capture.js'
import { PositiveInt } from './codecs.js'

/**
 * What research of a case is bound to: the repository (its recorded URL) and commit, and the
 * world database (client, databases, the operator's snapshot id). Every capture's origin must
 * match the binding in force when it is recorded.
 * @category investigations
 */
export const Binding = t.type(
  {
    source: t.union([t.null, t.type({ url: t.string, commit: CommitId })]),
    database: t.union([
      t.null,
      t.type({
        client: t.keyof({ mysql2: null, 'better-sqlite3': null }),
        databases: t.array(t.string),
        snapshot_id: t.string
      })
    ])
  },
  'Binding'
)
export type Binding = t.TypeOf<typeof Binding>

/** The source.context settings an investigation started with, as versions 1 and 2 recorded them. */
const SourceContextSettingsV1 = t.type({
  context_lines: t.number,
  max_searches: t.number,
  max_matches: t.number,
  max_files: t.number,
  max_blocks: t.number,
  max_total_lines: t.number,
  registration_prefixes: t.array(t.string)
})

const SettingsV1Props = {
  prompt_version: t.literal('investigation_project_v1'),
  budget_total: PositiveInt,
  action_costs: t.type({ 'project.query': PositiveInt }),
  max_invalid_responses: PositiveInt,
  retry_delay_ms: t.number,
  prompt_max_chars: PositiveInt,
  source_context: t.union([t.null, SourceContextSettingsV1])
}

/** Version 1 of the settings: no token limit, prompt version 1, no query contract. */
export const InvestigationSettingsV1 = t.type(SettingsV1Props, 'InvestigationSettingsV1')

/** Version 2 of the settings: version 1 and a token limit. */
export const InvestigationSettingsV2 = t.type(
  {
    ...SettingsV1Props,
    /** Model tokens (as the providers report them) the investigation may spend; null: no limit. */
    max_tokens: t.union([PositiveInt, t.null])
  },
  'InvestigationSettingsV2'
)

/**
 * What the model may ask, as the contract of its prompt names it: the databases with their allowed
 * tables, the limits of one query, and where code lives in the snapshot (the rest may hold data
 * dumps). Recorded at the start, so the prompt renders from the log alone.
 */
export const QueryContract = t.intersection(
  [
    t.type({
      /** Null when the profile binds no source repository. */
      source: t.union([t.null, t.type({ code_path_prefixes: t.array(t.string) })]),
      databases: t.array(t.type({ name: t.string, allowed_tables: t.array(t.string) })),
      limits: t.type({
        max_lines: PositiveInt,
        max_rows: PositiveInt,
        max_result_bytes: PositiveInt,
        max_matches: PositiveInt,
        max_files: PositiveInt,
        max_line_chars: PositiveInt,
        max_in_values: PositiveInt,
        max_filters: PositiveInt,
        max_columns: PositiveInt
      })
    }),
    t.partial({
      /**
       * What the start found: the allowed tables the snapshot does not hold, per database, and what
       * the profile says cannot be reached (absent for starts that did not check: their contract
       * says nothing of either, nor when a conclusion is accepted).
       */
      snapshot: t.type({
        absent_tables: t.array(t.type({ name: t.string, tables: t.array(t.string) })),
        /** What the profile says no query reaches (client data such as DBC files). */
        not_reachable: t.array(t.string)
      })
    })
  ],
  'QueryContract'
)
export type QueryContract = t.TypeOf<typeof QueryContract>

/** Version 3 of the settings: the query contract, no binding. */
const SettingsV3Props = {
  /** The prompt renderer of the investigation's life (investigation_project_v1 for starts before version 3). */
  prompt_version: t.keyof({ investigation_project_v1: null, investigation_project_v2: null }),
  budget_total: PositiveInt,
  /** Cost of one action, per action kind. */
  action_costs: t.type({ 'project.query': PositiveInt }),
  max_invalid_responses: PositiveInt,
  retry_delay_ms: t.number,
  prompt_max_chars: PositiveInt,
  /** The source.context contract and settings this context started with (null: not enabled). */
  source_context: t.union([
    t.null,
    t.intersection([SourceContextSettingsV1, t.type({ code_path_prefixes: t.array(t.string) })])
  ]),
  /** Model tokens (as the providers report them) the investigation may spend; null: no limit. */
  max_tokens: t.union([PositiveInt, t.null]),
  /** What the prompt's contract names (null for starts before version 3, whose prompt named none of it). */
  contract: t.union([t.null, QueryContract]),
  /** Refused queries and answers from the case count toward max_invalid_responses (false before version 3). */
  count_refusals: t.boolean,
  /** An identical query is answered from the case at no cost (false before version 3). */
  answer_repeats_from_case: t.boolean
}
export const InvestigationSettingsV3 = t.type(SettingsV3Props, 'InvestigationSettingsV3')

/** @category investigations */
export const InvestigationSettings = t.intersection(
  [
    t.type({
      ...SettingsV3Props,
      /** What the investigation's research is bound to (null for starts before version 4). */
      binding: t.union([Binding, t.null])
    }),
    t.partial({
      /**
       * The prompt guard never cuts the latest result (unless it alone is larger than the room the
       * fixed parts leave) and trims uncited evidence before cited; absent in starts before it
       * (their prompts render as they were recorded).
       */
      newest_result_whole: t.boolean,
      /**
       * The contract names the search options (ignore_case, whole_number) and says that a search
       * with few hits tells what it missed; absent in starts before them.
       */
      search_options: t.boolean,
      /**
       * The prompt words counts exactly (`1 path matches`, `1 hit`) and names who asked for a query
       * that is no plan (the MCP client by the name and version it gave); absent in starts before
       * it (their prompts say `1 paths match` and "an operator's query", as they were recorded).
       */
      exact_wording: t.boolean
    })
  ],
  'InvestigationSettings'
)
export type InvestigationSettings = t.TypeOf<typeof InvestigationSettings>

/** Version 2 settings as the current version: the behaviour they started with, nothing invented. */
export const upcastSettingsV2 = (
  v2: t.TypeOf<typeof InvestigationSettingsV2>
): t.TypeOf<typeof InvestigationSettingsV3> => ({
  ...v2,
  source_context: v2.source_context === null ? null : { ...v2.source_context, code_path_prefixes: [] },
  contract: null,
  count_refusals: false,
  answer_repeats_from_case: false
})
