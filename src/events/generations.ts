/**
 * Format generations: which version of every event type a writer of each generation writes. A
 * case's case.json records the generation of the writer that created it (`format_generation`);
 * a case of generation G holds only the versions generation G writes, so an older version in it
 * is a downgrade (rule `version.current`), not an old writer's event. A case without the member
 * was created before generations were recorded: its old versions are read as they always were,
 * and what a rule cannot check of them is said (RULE_NOT_APPLIED notices; `verify --strict`
 * makes them findings).
 *
 * Adding a version to an event type adds a generation here (a test holds the latest generation
 * to the registry's latest versions): cases of earlier generations keep being judged by theirs.
 */

/** Per generation (index 0 is generation 1): the version of each type a writer of it writes; 1 where not listed. */
export const FORMAT_GENERATIONS: ReadonlyArray<Readonly<Record<string, number>>> = [
  {
    NoteRecorded: 2,
    BudgetReserved: 3,
    InputsRecorded: 2,
    RevisionCompleted: 2,
    InvestigationStarted: 4,
    ModelResponded: 2
  },
  // generation 2: a reservation for an operator's query records the request itself
  {
    NoteRecorded: 2,
    BudgetReserved: 4,
    InputsRecorded: 2,
    RevisionCompleted: 2,
    InvestigationStarted: 4,
    ModelResponded: 2
  }
]

/** The generation this library writes into every new case's case.json. */
export const CURRENT_FORMAT_GENERATION = FORMAT_GENERATIONS.length

/**
 * The version a writer of `generation` writes for `type` when `version` is older than it, else
 * null. A generation newer than this library's is judged by the newest one it knows.
 */
export const outdatedVersion = (generation: number, type: string, version: number): number | null => {
  const table = FORMAT_GENERATIONS[Math.min(generation, FORMAT_GENERATIONS.length) - 1]
  const written = table?.[type] ?? 1
  return version < written ? written : null
}
