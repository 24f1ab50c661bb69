import { attempt } from '../src/failures/error.js'
/**
 * Generates case-format/examples (npm run examples): valid cases (a basic one and a whole
 * investigation), one broken case per error finding code (examples/broken/<CODE>), one case per
 * crash-leftover notice (examples/leftovers/<CODE>), and one forged case per rule family and
 * receipt finding (examples/forged/<NAME>, with the expected findings beside it). Deterministic: the same code writes the same bytes, and a test
 * regenerates everything into a temporary directory and compares it with the committed files.
 *
 * examples/valid/written-with-v1-events is frozen: written once with version-1 events and never
 * regenerated, so later versions of the library must keep replaying it. So is
 * examples/valid/written-with-v1-prompts: the whole investigation as the library wrote it with
 * prompt version investigation_project_v1 (and InvestigationStarted version 1); its recorded prompts
 * must keep rendering byte for byte from the state before them. And so is
 * examples/valid/written-with-v2-legacy-wording: valid/investigation as the library wrote it before
 * starts recorded exact_wording (its v2 prompts say `1 rows`) and before BudgetReserved version 4.
 */
import { promises as fsp, existsSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../src/fp.js'
import { openCase } from '../src/fp.js'
import { appendCommand } from '../src/adapters/case-store/append.js'
import { objectRefOf } from '../src/adapters/case-store/objects.js'
import { SUMMARY_FILE } from '../src/adapters/case-store/layout.js'
import { fixedEnv } from '../src/adapters/env.js'
import { canonicalJson, sha256Digest } from '../src/events/canonical.js'
import { genesisHash } from '../src/events/chain.js'
import { CaseDeclaration } from '../src/events/envelope.js'
import { collectRefs, objectPath } from '../src/events/refs.js'
import { repoRoot } from '../test/helpers/fs.js'
import { forger } from '../test/helpers/forger.js'
import { writeInvestigation } from '../test/helpers/investigation.js'
import { readFileSync } from 'node:fs'
import * as os from 'node:os'

const must = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}

const LOG_BYTES = Buffer.from(
  '2026-11-29 21:14:03 [creature] entry 23487 (guid 991) evaded and reset while in combat\n'
)

/** The valid base case: three commands, one attachment. */
const writeBase = async (dir: string): Promise<void> => {
  const env = fixedEnv('2026-11-30T08:00:00.000Z', 'ex')
  must(await initCase({ dir, caseId: 'case-example', title: 'Wolpertinger resets in combat', env })())
  const h = must(await openCase(dir)())
  must(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-report',
          expectedGeneration: 0,
          events: [
            {
              type: 'NoteRecorded',
              actor: 'operator',
              data: { text: 'Report: the creature resets while players fight it.', format: 'plain' }
            },
            {
              type: 'AttachmentAdded',
              actor: 'operator',
              data: { name: 'server.log', object: objectRefOf(LOG_BYTES, 'text/plain') }
            }
          ],
          objects: [LOG_BYTES]
        },
        { env }
      )
    )
  )
  must(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-triage',
          expectedGeneration: 2,
          events: [
            {
              type: 'NoteRecorded',
              actor: 'controller',
              data: { text: 'Triage: **reproducible** on the test realm.', format: 'markdown' }
            }
          ]
        },
        { env }
      )
    )
  )
}

/** The frozen case written with version-1 NoteRecorded events. */
const writeV1 = async (dir: string): Promise<void> => {
  const env = fixedEnv('2026-11-30T09:00:00.000Z', 'v1')
  must(await initCase({ dir, caseId: 'case-written-with-v1-events', env })())
  const h = must(await openCase(dir)())
  must(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-1',
          expectedGeneration: 0,
          events: [
            { type: 'NoteRecorded', version: 1, actor: 'operator', data: { text: 'a note from the first format' } }
          ]
        },
        { env }
      )
    )
  )
  must(
    await attempt(
      appendCommand(
        h,
        {
          commandId: 'cmd-2',
          expectedGeneration: 1,
          events: [
            { type: 'NoteRecorded', version: 1, actor: 'controller', data: { text: 'another version-1 note' } },
            {
              type: 'NoteRecorded',
              version: 2,
              actor: 'operator',
              data: { text: 'a *current* note', format: 'markdown' }
            }
          ]
        },
        { env }
      )
    )
  )
}

type Envelope = Record<string, unknown>

const readLines = async (dir: string): Promise<Envelope[]> =>
  (await fsp.readFile(path.join(dir, 'events.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Envelope)

/** Seals envelopes with correct hashes, chaining each to the previous unless `prev` is given. */
const forge = async (dir: string, envelopes: Envelope[], opts: { keepPrev?: boolean } = {}): Promise<string[]> => {
  const decl = must(CaseDeclaration.decode(JSON.parse(await fsp.readFile(path.join(dir, 'case.json'), 'utf8'))))
  let prev = must(genesisHash(decl))
  return envelopes.map((e) => {
    const { hash: _h, ...rest } = e
    const unsealed = opts.keepPrev === true ? rest : { ...rest, prev }
    const hash = sha256Digest(must(canonicalJson(unsealed)))
    prev = hash
    return must(canonicalJson({ ...unsealed, hash }))
  })
}

/** Rewrites the log from lines and points HEAD at its end (seq and hash of the last line). */
const writeLog = async (dir: string, lines: string[], head: 'follow' | 'keep' = 'follow'): Promise<void> => {
  const text = lines.map((l) => `${l}\n`).join('')
  await fsp.writeFile(path.join(dir, 'events.jsonl'), text)
  if (head === 'keep') return
  const last = JSON.parse(lines[lines.length - 1] ?? '{}') as { seq?: number; hash?: string }
  await fsp.writeFile(
    path.join(dir, 'HEAD'),
    `${must(canonicalJson({ bytes: Buffer.byteLength(text), hash: last.hash, seq: last.seq }))}\n`
  )
}

const objectFile = (dir: string, bytes: Buffer): string => path.join(dir, objectPath(objectRefOf(bytes).digest))

/** Each mutation turns a copy of the base case into an example of one finding. */
const BROKEN: Record<string, (dir: string) => Promise<void>> = {
  CASE_DECLARATION_MISSING: async (d) => fsp.rm(path.join(d, 'case.json')),
  CASE_DECLARATION_INVALID: async (d) => {
    const text = await fsp.readFile(path.join(d, 'case.json'), 'utf8')
    await fsp.writeFile(path.join(d, 'case.json'), `${JSON.stringify(JSON.parse(text), null, 2)}\n`)
  },
  LOG_MISSING: async (d) => fsp.rm(path.join(d, 'events.jsonl')),
  LOG_TRUNCATED: async (d) => {
    const lines = (await readLines(d)).map((e) => must(canonicalJson(e)))
    await writeLog(d, lines.slice(0, -1), 'keep')
  },
  HEAD_MISSING: async (d) => fsp.rm(path.join(d, 'HEAD')),
  HEAD_INVALID: async (d) => fsp.writeFile(path.join(d, 'HEAD'), '{"seq":3}\n'),
  HEAD_MISMATCH: async (d) => {
    const head = JSON.parse(await fsp.readFile(path.join(d, 'HEAD'), 'utf8')) as Record<string, unknown>
    await fsp.writeFile(
      path.join(d, 'HEAD'),
      `${must(canonicalJson({ ...head, hash: sha256Digest('another history') }))}\n`
    )
  },
  EVENT_MALFORMED: async (d) => {
    const lines = (await readLines(d)).map((e) => must(canonicalJson(e)))
    lines.splice(1, 1, '{"actor":"operator","at":')
    await writeLog(d, lines)
  },
  EVENT_NOT_CANONICAL: async (d) => {
    const events = await readLines(d)
    // same members, reverse order: valid JSON with a correct hash, but not RFC 8785 canonical
    const reversed = (e: Envelope): Envelope => Object.fromEntries(Object.entries(e).reverse())
    await writeLog(
      d,
      events.map((e, i) => (i === 1 ? JSON.stringify(reversed(e)) : must(canonicalJson(e))))
    )
  },
  EVENT_ENVELOPE_INVALID: async (d) => {
    const events = await readLines(d)
    const { actor: _a, ...withoutActor } = events[2] ?? {}
    await writeLog(d, await forge(d, [events[0] ?? {}, events[1] ?? {}, withoutActor]))
  },
  EVENT_HASH_MISMATCH: async (d) => {
    const events = await readLines(d)
    const first = events[0] as { data: { text: string } }
    first.data.text = first.data.text.replace('resets', 'despawns')
    await writeLog(
      d,
      events.map((e) => must(canonicalJson(e)))
    )
  },
  EVENT_UNKNOWN_TYPE: async (d) => {
    const events = await readLines(d)
    await writeLog(
      d,
      await forge(d, [
        ...events,
        {
          ...events[2],
          seq: 4,
          id: 'evt-forged',
          command_id: 'cmd-forged',
          type: 'TicketEscalated',
          data: { to: 'dev' }
        }
      ])
    )
  },
  EVENT_UNKNOWN_VERSION: async (d) => {
    const events = await readLines(d)
    await writeLog(
      d,
      await forge(d, [...events, { ...events[2], seq: 4, id: 'evt-forged', command_id: 'cmd-forged', version: 9 }])
    )
  },
  EVENT_DATA_INVALID: async (d) => {
    const events = await readLines(d)
    await writeLog(
      d,
      await forge(d, [
        ...events,
        { ...events[2], seq: 4, id: 'evt-forged', command_id: 'cmd-forged', data: { text: 42, format: 'plain' } }
      ])
    )
  },
  EVENT_ID_DUPLICATE: async (d) => {
    const events = await readLines(d)
    await writeLog(d, await forge(d, [...events, { ...events[2], seq: 4, command_id: 'cmd-forged' }]))
  },
  COMMAND_SPLIT: async (d) => {
    const events = await readLines(d)
    await writeLog(d, await forge(d, [...events, { ...events[2], seq: 4, id: 'evt-forged', command_id: 'cmd-report' }]))
  },
  SEQ_GAP: async (d) => {
    const events = await readLines(d)
    await writeLog(d, await forge(d, [events[0] ?? {}, events[1] ?? {}, { ...events[2], seq: 4 }]))
  },
  SEQ_REORDERED: async (d) => {
    const events = await readLines(d)
    await writeLog(d, await forge(d, [events[0] ?? {}, events[2] ?? {}, events[1] ?? {}]))
  },
  CHAIN_BROKEN: async (d) => {
    const events = await readLines(d)
    const sealed = await forge(d, events)
    const forged = await forge(d, [{ ...events[2], prev: sha256Digest('a history that never was') }], {
      keepPrev: true
    })
    await writeLog(d, [sealed[0] ?? '', sealed[1] ?? '', forged[0] ?? ''])
  },
  OBJECT_REF_INVALID: async (d) => {
    const events = await readLines(d)
    await writeLog(
      d,
      await forge(d, [
        ...events,
        {
          ...events[1],
          seq: 4,
          id: 'evt-forged',
          command_id: 'cmd-forged',
          data: { name: 'passwd', object: { digest: 'sha256:../../../../etc/passwd', size: 1 } }
        }
      ])
    )
  },
  OBJECT_MISSING: async (d) => fsp.rm(objectFile(d, LOG_BYTES), { force: true }),
  OBJECT_DIGEST_MISMATCH: async (d) => {
    const f = objectFile(d, LOG_BYTES)
    await fsp.chmod(f, 0o644)
    await fsp.writeFile(f, Buffer.from(LOG_BYTES.toString().replace('23487', '23488')))
  },
  OBJECT_SIZE_MISMATCH: async (d) => {
    const events = await readLines(d)
    const ref = objectRefOf(LOG_BYTES)
    await writeLog(
      d,
      await forge(d, [
        ...events,
        {
          ...events[1],
          seq: 4,
          id: 'evt-forged',
          command_id: 'cmd-forged',
          data: { name: 'server.log', object: { digest: ref.digest, size: ref.size + 1 } }
        }
      ])
    )
  },
  FOREIGN_FILE: async (d) => fsp.writeFile(path.join(d, 'notes.txt'), 'this file does not belong to the package\n')
}

const LEFTOVERS: Record<string, (dir: string) => Promise<void>> = {
  TORN_TAIL: async (d) =>
    fsp.appendFile(path.join(d, 'events.jsonl'), '{"actor":"controller","at":"2026-11-30T08:00:0'),
  UNACKNOWLEDGED_TAIL: async (d) => {
    const events = await readLines(d)
    const sealed = await forge(d, [
      ...events,
      { ...events[2], seq: 4, id: 'evt-unacknowledged', command_id: 'cmd-crashed' }
    ])
    await fsp.appendFile(path.join(d, 'events.jsonl'), `${sealed[3] ?? ''}\n`)
  },
  ORPHAN_OBJECT: async (d) => {
    const bytes = Buffer.from('payload written by an append that crashed before its events\n')
    await fsp.mkdir(path.dirname(objectFile(d, bytes)), { recursive: true })
    await fsp.writeFile(objectFile(d, bytes), bytes)
  },
  TEMP_FILE_LEFTOVER: async (d) => fsp.writeFile(path.join(d, '.vba-tmp-4242-0a1b2c3d4e5f'), 'partial'),
  LOCK_PRESENT: async (d) =>
    fsp.writeFile(
      path.join(d, '.vba-lock'),
      `${JSON.stringify({ pid: 4242, host: 'archive-host-that-is-gone', token: '00', acquired_at: '2026-11-30T08:00:00.000Z' })}\n`
    ),
  RUN_PRESENT: async (d) =>
    fsp.writeFile(
      path.join(d, '.vba-run'),
      `${JSON.stringify({ pid: 4242, host: 'archive-host-that-is-gone', what: 'vba investigate', started_at: '2026-11-30T08:00:00.000Z', token: '00' })}\n`
    )
}

/**
 * Forged cases, one per rule family: a correct hash chain over events the library's deciders
 * could not have produced (written over valid/investigation with the test forger). Next to each:
 * `<NAME>.expected.json` (the findings verify must report) and, for receipts, `<NAME>.receipt`.
 */
interface Forgery {
  /** Verified with --strict (a `<NAME>.strict` file beside it). */
  readonly strict?: boolean
  /**
   * Written over valid/investigation as started without exact_wording (its prompts in the wording
   * of the starts it forges, which cannot record it), not over valid/investigation itself.
   */
  readonly legacyWording?: boolean
  readonly write: (dir: string) => string | null
  readonly expected: ReadonlyArray<{ code: string; rule?: string; seq?: number }>
}

const PLAN_ARGS = {
  kind: 'database.rows',
  table: 'smart_scripts',
  columns: ['entryorguid', 'source_type', 'id', 'action_type', 'comment'],
  filters: [{ column: 'entryorguid', operator: 'eq', value: 23487 }],
  offset: 0,
  limit: 10
}
const planDigest = (): string => sha256Digest(must(canonicalJson(PLAN_ARGS)))
const checkpoint = (generation: number, state: string): { type: string; actor: 'system'; data: unknown } => ({
  type: 'CheckpointRecorded',
  actor: 'system',
  data: { generation, state, reason: null, resume_state: null, retry_not_before: null, manual_retry: false }
})

/** RevisionCompleted (seq 5) sealed again as version 1: no binding, no enrichment settings. */
const downgradeRevision = (f: ReturnType<typeof forger>): void => {
  f.rewrite(
    5,
    (d) => {
      const { binding: _b, enrichment: _e, ...v1 } = d as Record<string, unknown>
      return v1
    },
    { version: 1 }
  )
  // Its enrichment settings' object is no longer referenced: gone, as a forger would leave it.
  f.cut(f.envelopes().length)
}
/** InvestigationStarted (seq 6) sealed again as version 3: its settings without the binding (nor what later starts add). */
const downgradeStart = (f: ReturnType<typeof forger>): void => {
  f.rewrite(
    6,
    (d) => {
      const {
        binding: _b,
        newest_result_whole: _n,
        search_options: _o,
        exact_wording: _w,
        ...settings
      } = (d as { settings: Record<string, unknown> }).settings
      return { ...(d as Record<string, unknown>), settings }
    },
    { version: 3 }
  )
}
/** The case as if created before format generations were recorded (case.json without one, the chain sealed again). */
const beforeGenerations = (f: ReturnType<typeof forger>): void => {
  f.redeclare(({ format_generation: _g, ...d }) => d)
}

const FORGED: Record<string, Forgery> = {
  RULE_ACTOR: {
    write: (d) => {
      forger(d).append('forged-note', [
        { type: 'NoteRecorded', actor: 'model', data: { text: 'The model says the bug is fixed.', format: 'plain' } }
      ])
      return null
    },
    expected: [{ code: 'RULE_ACTOR', rule: 'actor.allowed', seq: 26 }]
  },
  RULE_LIFECYCLE: {
    write: (d) => {
      forger(d).append('forged-reopen', [checkpoint(4, 'INVESTIGATING')])
      return null
    },
    expected: [{ code: 'RULE_LIFECYCLE', rule: 'lifecycle.terminal', seq: 26 }]
  },
  RULE_BUDGET: {
    write: (d) => {
      const f = forger(d)
      f.cut(17)
      f.append('forged-reserve', [
        {
          type: 'BudgetReserved',
          actor: 'controller',
          data: {
            reservation_id: 'res-forged',
            action: 'project.query',
            amount: 10,
            plan_id: null,
            request_digest: planDigest(),
            requester: null,
            request: null
          }
        }
      ])
      return null
    },
    expected: [{ code: 'RULE_BUDGET', rule: 'budget.overdrawn', seq: 18 }]
  },
  RULE_RESEARCH: {
    write: (d) => {
      const f = forger(d)
      const real = f.envelopes().find((e) => e.type === 'CaptureRecorded')?.data as { capture: { digest: string } }
      const hex = real.capture.digest.slice(7)
      const original = JSON.parse(
        readFileSync(path.join(d, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2)), 'utf8')
      ) as Record<string, unknown>
      // the same request and rows, relabelled as another kind of query
      const bytes = Buffer.from(must(canonicalJson({ ...original, kind: 'database.count' })), 'utf8')
      f.cut(15)
      const ref = f.object(bytes, 'application/vnd.vba.capture+json')
      f.append('forged-capture', [
        {
          type: 'CaptureRecorded',
          actor: 'system',
          data: {
            reservation_id: 'res-P2',
            capture: ref,
            kind: 'database.rows',
            request_digest: planDigest(),
            evidence_id: 'E4',
            repeat: false
          }
        },
        { type: 'BudgetConsumed', actor: 'system', data: { reservation_id: 'res-P2', amount: 1 } }
      ])
      return null
    },
    expected: [{ code: 'RULE_RESEARCH', rule: 'research.capture-object', seq: 16 }]
  },
  RULE_TIME: {
    write: (d) => {
      const f = forger(d)
      f.cut(21)
      f.append(
        'forged-old-note',
        [
          {
            type: 'NoteRecorded',
            actor: 'operator',
            data: { text: 'A note dated before the case existed.', format: 'plain' }
          }
        ],
        [],
        { at: '2001-01-01T00:00:00.000Z' }
      )
      return null
    },
    expected: [
      { code: 'RULE_TIME', rule: 'time.order', seq: 22 },
      { code: 'RULE_TIME', rule: 'time.order', seq: 22 }
    ]
  },
  RULE_TURN: {
    write: (d) => {
      const f = forger(d)
      f.cut(21)
      f.append('forged-hypothesis', [
        {
          type: 'HypothesisProposed',
          actor: 'model',
          data: { hypothesis_id: 'H2', statement: 'A hypothesis no model answer made.', evidence: ['E4'] }
        }
      ])
      return null
    },
    expected: [{ code: 'RULE_TURN', rule: 'turn.decision', seq: 22 }]
  },
  RULE_REFERENCE: {
    write: (d) => {
      const f = forger(d)
      const answer = f.envelopes()[22]
      f.cut(
        22,
        collectRefs(answer?.data).refs.map((r) => r.digest)
      )
      f.append('forged-conclusion', [
        { type: 'ModelResponded', actor: 'model', data: answer?.data },
        {
          type: 'ConclusionRecorded',
          actor: 'model',
          data: { summary: 'Proven by evidence nobody recorded.', hypotheses: ['H7'], evidence: ['E99'] }
        },
        checkpoint(3, 'CONCLUDED')
      ])
      return null
    },
    // The forged conclusion is also not what the deciders make of the answer it is recorded with.
    expected: [
      { code: 'RULE_REFERENCE', rule: 'reference.hypothesis', seq: 24 },
      { code: 'RULE_REFERENCE', rule: 'reference.evidence', seq: 24 },
      { code: 'RULE_TURN', rule: 'turn.derived', seq: 23 }
    ]
  },
  RULE_REVISION: {
    write: (d) => {
      const f = forger(d)
      const report = f.object(Buffer.from('A second report.\n'), 'text/plain')
      const index = { report, entities: [], attachments: [] }
      const facts = Buffer.from(
        must(
          canonicalJson({
            format: 'vba-facts',
            version: 1,
            revision: 2,
            facts: [
              {
                fact_id: 'F1',
                type: 'entity',
                entity_type: 'quest',
                id: 1,
                source: 'input',
                table: 'quest_template',
                values: {},
                texts: {},
                provenance: { capture: sha256Digest('no such capture'), pointer: '/result/rows/0' }
              },
              {
                fact_id: 'F2',
                type: 'project_context_coverage',
                queries_run: 0,
                identical_queries_reused: 0,
                left_out: [],
                cycles_cut: [],
                complete: true,
                notice: 'forged'
              }
            ]
          })
        ),
        'utf8'
      )
      f.append('forged-inputs', [
        {
          type: 'InputsRecorded',
          actor: 'operator',
          data: {
            revision: 2,
            inputs_version: 1,
            inputs_digest: sha256Digest(must(canonicalJson(index))),
            ...index,
            origin: null
          }
        }
      ])
      f.append('forged-facts', [
        {
          type: 'RevisionCompleted',
          actor: 'system',
          data: {
            revision: 2,
            facts: f.object(facts, 'application/vnd.vba.facts+json'),
            fact_count: 2,
            queries: 0,
            complete: true,
            binding: null,
            enrichment: null
          }
        }
      ])
      return null
    },
    expected: [
      { code: 'RULE_REVISION', rule: 'revision.provenance', seq: 27 },
      // forged without enrichment settings: its facts cannot be derived again, and verify says so
      { code: 'RULE_NOT_APPLIED', rule: 'revision.derived', seq: 27 }
    ]
  },
  RULE_COMMAND: {
    write: (d) => {
      const f = forger(d)
      const real = f.envelopes().find((e) => e.type === 'CaptureRecorded')?.data
      f.cut(
        15,
        collectRefs(real).refs.map((r) => r.digest)
      )
      f.append('forged-unpaid', [{ type: 'CaptureRecorded', actor: 'system', data: real }])
      return null
    },
    expected: [{ code: 'RULE_COMMAND', rule: 'command.whole', seq: 16 }]
  },
  // Downgrades: an old version written into a case of today's format generation.
  RULE_VERSION: {
    write: (d) => {
      downgradeRevision(forger(d))
      return null
    },
    expected: [
      { code: 'RULE_VERSION', rule: 'version.current', seq: 5 },
      { code: 'RULE_NOT_APPLIED', rule: 'revision.derived', seq: 5 },
      { code: 'RULE_NOT_APPLIED', rule: 'research.binding', seq: 5 }
    ]
  },
  'RULE_VERSION-start': {
    legacyWording: true,
    write: (d) => {
      downgradeStart(forger(d))
      return null
    },
    expected: [{ code: 'RULE_VERSION', rule: 'version.current', seq: 6 }]
  },
  // The same downgrades in a case that claims to predate generations: valid, with the rules that
  // could not apply said; verified with --strict (beside them: <NAME>.strict), they are findings.
  RULE_NOT_APPLIED: {
    strict: true,
    write: (d) => {
      const f = forger(d)
      beforeGenerations(f)
      downgradeRevision(f)
      return null
    },
    expected: [
      { code: 'RULE_NOT_APPLIED', rule: 'revision.derived', seq: 5 },
      { code: 'RULE_NOT_APPLIED', rule: 'research.binding', seq: 5 }
    ]
  },
  'RULE_NOT_APPLIED-start': {
    strict: true,
    legacyWording: true,
    write: (d) => {
      const f = forger(d)
      beforeGenerations(f)
      downgradeRevision(f)
      downgradeStart(f)
      return null
    },
    expected: [
      { code: 'RULE_NOT_APPLIED', rule: 'revision.derived', seq: 5 },
      { code: 'RULE_NOT_APPLIED', rule: 'research.binding', seq: 5 },
      { code: 'RULE_NOT_APPLIED', rule: 'research.binding', seq: 16 }
    ]
  },
  HEAD_ROLLBACK: {
    write: (d) => {
      const f = forger(d)
      const receipt = f.head()
      f.cut(21)
      return receipt
    },
    expected: [{ code: 'HEAD_ROLLBACK' }]
  },
  HEAD_FORK: {
    write: (d) => {
      const f = forger(d)
      const receipt = `21:${f.envelopes()[20]?.hash ?? ''}`
      f.cut(20)
      f.append('note-repro', [
        {
          type: 'NoteRecorded',
          actor: 'operator',
          data: { text: 'Could not reproduce; closing as works-as-intended.', format: 'plain' }
        }
      ])
      return receipt
    },
    expected: [{ code: 'HEAD_FORK', seq: 21 }]
  }
}

export const BROKEN_CODES = Object.keys(BROKEN)
export const LEFTOVER_CODES = Object.keys(LEFTOVERS)
export const FORGED_NAMES = Object.keys(FORGED)

/** Writes all regenerable examples under `root` (which must not exist yet or be empty). */
export const writeExamples = async (root: string): Promise<void> => {
  const base = path.join(root, 'valid', 'basic')
  await fsp.rm(root, { recursive: true, force: true })
  await writeBase(base)
  // example bytes are exact: no line-ending conversion by git
  await fsp.writeFile(path.join(root, '.gitattributes'), '* -text\n')
  for (const [group, table] of [
    ['broken', BROKEN],
    ['leftovers', LEFTOVERS]
  ] as const) {
    for (const [code, mutate] of Object.entries(table)) {
      const dir = path.join(root, group, code)
      await fsp.cp(base, dir, { recursive: true })
      await mutate(dir)
    }
  }
  const investigation = path.join(root, 'valid', 'investigation')
  const world = await fsp.mkdtemp(path.join(os.tmpdir(), 'vba-examples-world-'))
  const legacy = path.join(world, 'legacy-wording')
  try {
    await writeInvestigation(investigation, world)
    const other = await fsp.mkdtemp(path.join(os.tmpdir(), 'vba-examples-world-'))
    try {
      await writeInvestigation(legacy, other, ({ exact_wording: _w, ...s }) => s)
    } finally {
      await fsp.rm(other, { recursive: true, force: true })
    }
    for (const [name, forgery] of Object.entries(FORGED)) {
      const dir = path.join(root, 'forged', name)
      await fsp.cp(forgery.legacyWording === true ? legacy : investigation, dir, { recursive: true })
      const receipt = forgery.write(dir)
      if (receipt !== null) await fsp.writeFile(`${dir}.receipt`, `${receipt}\n`)
      if (forgery.strict === true) await fsp.writeFile(`${dir}.strict`, 'verified with --strict\n')
      await fsp.writeFile(`${dir}.expected.json`, `${JSON.stringify(forgery.expected, null, 2)}\n`)
    }
  } finally {
    await fsp.rm(world, { recursive: true, force: true })
  }
  await dropSummaries(root)
}

/**
 * The examples are case packages: the listing summary the directory store writes beside a log
 * (SUMMARY_FILE, a local cache that verify ignores and no export carries) is not part of them.
 */
const dropSummaries = async (dir: string): Promise<void> => {
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) await dropSummaries(p)
    else if (entry.name === SUMMARY_FILE) await fsp.rm(p)
  }
}

export const writeFrozenV1 = writeV1

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))
if (isMain) {
  const root = path.join(repoRoot(), 'case-format', 'examples')
  const frozen = path.join(root, 'valid', 'written-with-v1-events')
  const keep = path.join(repoRoot(), '.examples-frozen-tmp')
  // the frozen cases that cannot be written again, kept aside while the others are written
  const kept = ['written-with-v1-prompts', 'written-with-v2-legacy-wording'].map((name) => ({
    name,
    dir: path.join(root, 'valid', name),
    aside: path.join(repoRoot(), `.examples-frozen-${name}-tmp`)
  }))
  for (const k of kept) {
    if (!existsSync(k.dir))
      throw new Error(`examples/valid/${k.name} is missing: restore it from git (it cannot be written again)`)
    await fsp.rename(k.dir, k.aside)
  }
  const replay = `${frozen}.replay.json`
  const keepReplay = `${keep}.replay.json`
  if (existsSync(frozen)) await fsp.rename(frozen, keep)
  if (existsSync(replay)) await fsp.rename(replay, keepReplay)
  await writeExamples(root)
  if (existsSync(keepReplay)) await fsp.rename(keepReplay, replay)
  for (const k of kept) await fsp.rename(k.aside, k.dir)
  if (existsSync(keep)) await fsp.rename(keep, frozen)
  else {
    await writeV1(frozen)
    process.stdout.write('wrote the frozen example valid/written-with-v1-events (commit it; never regenerate it)\n')
  }
  process.stdout.write(
    `wrote case-format/examples: valid/basic, valid/investigation, ${BROKEN_CODES.length} broken, ${LEFTOVER_CODES.length} leftovers, ${FORGED_NAMES.length} forged\n`
  )
}
