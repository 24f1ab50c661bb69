/**
 * The forgeries that verified VALID before the derivation rules: time running backwards (a note
 * dated before the case existed, an impossible date, a command whose events disagree on their
 * time, a MODEL_UNAVAILABLE block retrying at its own time, a resume dated in the future), foreign
 * events inside the command that records a model's answer, an answer while the case is blocked,
 * and a research block ended by an unrelated reservation. Each is forged with an intact chain
 * on the base investigation and must be named by its rule.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { ruleFold, type RuleViolation } from '../../src/domain/rules.js'
import { checkLine, sealEvent, type RecordedEvent } from '../../src/events/chain.js'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import type { Actor } from '../../src/events/codecs.js'
import { verifyCase } from '../../src/fp.js'
import { objectPath } from '../../src/events/refs.js'
import { forger } from '../../src/testing.js'
import { writeInvestigation } from '../helpers/investigation.js'
import { right, tempDir } from '../helpers/fs.js'

const base = path.join(tempDir('forgeries'), 'case')
await writeInvestigation(base, tempDir('forgeries-world'))
const recorded: RecordedEvent[] = readFileSync(path.join(base, 'events.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l, i) => {
    const c = checkLine(l, { seq: i + 1, prev: null, lineNo: i + 1 })
    if (c.event === undefined) throw new Error(JSON.stringify(c.findings))
    return c.event
  })
const CREATED = (JSON.parse(readFileSync(path.join(base, 'case.json'), 'utf8')) as { created_at: string }).created_at
const LATER = '2026-11-30T10:00:05.000Z'

type Draft = { type: string; actor: Actor; data: unknown }
interface Forged {
  readonly events: readonly Draft[]
  readonly at?: readonly string[] | string
}

/** The base log up to `cut`, then forged commands (each at its time, or per event); the violations of the forged part. */
const forge = (cut: number, ...commands: Forged[]): RuleViolation[] => {
  const fold = ruleFold(undefined, { createdAt: CREATED, notAfter: Date.parse('2026-12-31T00:00:00.000Z') })
  assert.equal(
    recorded.slice(0, cut).flatMap((e) => fold.feed(e)),
    []
  )
  let prev = recorded[cut - 1]?.hash ?? ''
  let seq = cut
  const out: RuleViolation[] = []
  commands.forEach((c, i) =>
    c.events.forEach((d, j) => {
      seq++
      const at = typeof c.at === 'string' ? c.at : (c.at?.[j] ?? LATER)
      const s = right(sealEvent(d, { seq, prev, id: `forged-${seq}`, at, commandId: `forged-${i}` }))
      prev = s.envelope.hash
      out.push(...fold.feed(s.event))
    })
  )
  out.push(...fold.end())
  return out
}
const fires = (violations: RuleViolation[], code: string, rule: string, seq: number): void => {
  assert.ok(
    violations.some((v) => v.code === code && v.rule === rule && v.seq === seq),
    `expected ${code} ${rule} at seq ${seq}, got ${JSON.stringify(violations)}`
  )
}
const seqOf = (pred: (e: RecordedEvent) => boolean): number => recorded.find(pred)?.seq ?? -1
const note = (actor: Actor = 'operator'): Draft => ({
  type: 'NoteRecorded',
  actor,
  data: { text: 'n', format: 'plain' }
})
const checkpoint = (generation: number, state: string, extra: Record<string, unknown> = {}): Draft => ({
  type: 'CheckpointRecorded',
  actor: 'system',
  data: { generation, state, reason: null, resume_state: null, retry_not_before: null, manual_retry: false, ...extra }
})
const request = (turn: number): Draft => ({
  type: 'ModelRequested',
  actor: 'controller',
  data: {
    turn,
    phase: 'investigation',
    prompt: { digest: sha256Digest('p'), size: 1 },
    prompt_version: 'investigation_project_v1',
    prompt_chars: 1
  }
})
const responded = (turn: number): Draft => ({
  type: 'ModelResponded',
  actor: 'model',
  data: { turn, raw: { digest: sha256Digest('r'), size: 1 }, provenance: null }
})

// The base: a note at `noteSeq` while INVESTIGATING; the turn and checkpoint counters there.
const noteSeq = seqOf((e) => e.type === 'NoteRecorded')
const stateAt = (cut: number) => {
  const f = ruleFold()
  for (const e of recorded.slice(0, cut)) f.feed(e)
  return f.state()
}
const s0 = stateAt(noteSeq)

const test = suite('forgeries the derivation rules catch')

test('time.order: a note dated 2001, before the case existed and before the event it follows', () => {
  const v = forge(noteSeq, { events: [note()], at: '2001-01-01T00:00:00.000Z' })
  assert.is(v.filter((x) => x.code === 'RULE_TIME' && x.rule === 'time.order').length, 2)
})
test('time.format: 2026-99-99T99:99:99.999Z is not an instant', () =>
  fires(forge(noteSeq, { events: [note()], at: '2026-99-99T99:99:99.999Z' }), 'RULE_TIME', 'time.format', noteSeq + 1))
test('time.command: the events of one command disagree on their time', () =>
  fires(
    forge(noteSeq, { events: [note(), note()], at: [LATER, '2026-11-30T10:00:06.000Z'] }),
    'RULE_TIME',
    'time.command',
    noteSeq + 2
  ))
test('time.future: a resume post-dated past the verification', () =>
  fires(forge(noteSeq, { events: [note()], at: '2027-06-01T00:00:00.000Z' }), 'RULE_TIME', 'time.future', noteSeq + 1))
test('time.retry: a MODEL_UNAVAILABLE block whose retry time is its own time', () => {
  const turn = s0.turn + 1
  const v = forge(
    noteSeq,
    { events: [request(turn)] },
    {
      events: [
        { type: 'ModelFailed', actor: 'system', data: { turn, code: 'MODEL_CALL_FAILED', message: 'm' } },
        checkpoint(s0.checkpoint + 1, 'BLOCKED', {
          reason: 'MODEL_UNAVAILABLE',
          resume_state: 'INVESTIGATING',
          retry_not_before: LATER
        })
      ]
    }
  )
  fires(v, 'RULE_TIME', 'time.retry', noteSeq + 3)
})
test("command.members: an operator note and a 1000-unit top-up inside the command that records the model's answer", () => {
  const turn = s0.turn + 1
  const v = forge(
    noteSeq,
    { events: [request(turn)] },
    {
      events: [
        responded(turn),
        note(),
        { type: 'BudgetToppedUp', actor: 'operator', data: { amount: 1000, reason: 'more' } },
        {
          type: 'HypothesisProposed',
          actor: 'model',
          data: { hypothesis_id: `H${s0.hypotheses.size + 1}`, statement: 's', evidence: [] }
        }
      ]
    }
  )
  fires(v, 'RULE_COMMAND', 'command.members', noteSeq + 3)
  fires(v, 'RULE_COMMAND', 'command.members', noteSeq + 4)
})
const signed = (first: number, last: number, lastHash: string, actors: Actor[] = ['operator']): Draft => ({
  type: 'CommandSigned',
  actor: 'operator',
  data: {
    principal: 'op',
    key: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${'A'.repeat(43)}`,
    fingerprint: `SHA256:${'A'.repeat(43)}`,
    case_id: 'case-x',
    first_seq: first,
    last_seq: last,
    last_hash: lastHash,
    actors,
    signature: 'U1NIU0lH'.repeat(4)
  }
})
test('command.signature: a signature naming another range, one standing first, a note after a signature', () => {
  const v = forge(noteSeq, { events: [note(), signed(noteSeq, noteSeq + 1, sha256Digest('x'))] })
  fires(v, 'RULE_COMMAND', 'command.signature', noteSeq + 2)
  const alone = forge(noteSeq, { events: [signed(noteSeq, noteSeq, sha256Digest('x'))] })
  fires(alone, 'RULE_COMMAND', 'command.signature', noteSeq + 1)
  const wrongActors = forge(noteSeq, {
    events: [note(), signed(noteSeq + 1, noteSeq + 1, sha256Digest('x'), ['model'])]
  })
  fires(wrongActors, 'RULE_COMMAND', 'command.signature', noteSeq + 2)
  const after = forge(noteSeq, { events: [note(), signed(noteSeq + 1, noteSeq + 1, sha256Digest('x')), note()] })
  fires(after, 'RULE_COMMAND', 'command.members', noteSeq + 3)
})
test('turn.answer: a model answer recorded while the case is BLOCKED', () => {
  const turn = s0.turn + 1
  const v = forge(
    noteSeq,
    { events: [request(turn)] },
    {
      events: [
        {
          type: 'BudgetReserved',
          actor: 'controller',
          data: {
            reservation_id: 'res-op',
            action: 'project.query',
            amount: 1,
            plan_id: null,
            request_digest: sha256Digest('q'),
            requester: null,
            request: null
          }
        }
      ]
    },
    {
      events: [
        {
          type: 'ResearchFailed',
          actor: 'system',
          data: { reservation_id: 'res-op', code: 'DATABASE_UNAVAILABLE', message: 'down', unavailable: true }
        },
        checkpoint(s0.checkpoint + 1, 'BLOCKED', {
          reason: 'RESEARCH_UNAVAILABLE',
          resume_state: 'INVESTIGATING',
          retry_not_before: '2026-11-30T10:00:35.000Z'
        })
      ]
    },
    {
      events: [
        responded(turn),
        {
          type: 'HypothesisProposed',
          actor: 'model',
          data: { hypothesis_id: `H${s0.hypotheses.size + 1}`, statement: 's', evidence: [] }
        }
      ]
    }
  )
  fires(v, 'RULE_TURN', 'turn.answer', noteSeq + 5)
})
test('lifecycle.resume: a RESEARCH_UNAVAILABLE block ended by an unrelated reservation', () => {
  // The base's plan P2 at its reservation: an outage blocks it; an operator query's release then "ends" the block.
  const reserved = recorded.find(
    (e) => e.type === 'BudgetReserved' && (e.data as { plan_id: string | null }).plan_id !== null
  )
  if (reserved === undefined) throw new Error('no plan reservation in the base')
  const s = stateAt(reserved.seq)
  const rid = (reserved.data as { reservation_id: string }).reservation_id
  const v = forge(
    reserved.seq,
    {
      events: [
        {
          type: 'ResearchFailed',
          actor: 'system',
          data: { reservation_id: rid, code: 'DATABASE_UNAVAILABLE', message: 'down', unavailable: true }
        },
        checkpoint(s.checkpoint + 1, 'BLOCKED', {
          reason: 'RESEARCH_UNAVAILABLE',
          resume_state: 'INVESTIGATING',
          retry_not_before: '2026-11-30T10:00:35.000Z'
        })
      ]
    },
    {
      events: [
        {
          type: 'BudgetReserved',
          actor: 'controller',
          data: {
            reservation_id: 'res-other',
            action: 'project.query',
            amount: 1,
            plan_id: null,
            request_digest: sha256Digest('q'),
            requester: null,
            request: null
          }
        }
      ]
    },
    {
      events: [
        {
          type: 'ResearchFailed',
          actor: 'system',
          data: { reservation_id: 'res-other', code: 'QUERY_INVALID', message: 'no', unavailable: false }
        },
        {
          type: 'BudgetReleased',
          actor: 'system',
          data: { reservation_id: 'res-other', amount: 1, reason: 'refused' }
        },
        checkpoint(s.checkpoint + 2, 'INVESTIGATING')
      ]
    }
  )
  fires(v, 'RULE_LIFECYCLE', 'lifecycle.resume', reserved.seq + 6)
})

const cli = suite('through verify (a forged directory)')
cli('a forged note dated 2001 and a foreign top-up inside an answer make the case INVALID', async () => {
  const dir = path.join(tempDir('forgeries-dir'), 'case')
  await writeInvestigation(dir, tempDir('forgeries-world-2'))
  const f = forger(dir)
  f.cut(noteSeq - 1)
  f.append('old-note', [note()], [], { at: '2001-01-01T00:00:00.000Z' })
  const r = right(await verifyCase(dir)())
  assert.not.ok(r.valid)
  assert.ok(
    r.findings.some((x) => x.code === 'RULE_TIME'),
    JSON.stringify(r.findings)
  )
})

cli(
  'turn.derived: a conclusion recorded after an answer that asked for a lab test (or refused, or cited E99); a valid answer recorded as rejected',
  async () => {
    const cases: Array<{ raw: string; decided: (turn: number, s: typeof s0) => Draft[] }> = [
      {
        raw: JSON.stringify({ next: { kind: 'lab_test', description: 'Net a wolpertinger on the test realm.' } }),
        decided: (_t, s) => [
          { type: 'ConclusionRecorded', actor: 'model', data: { summary: 'Forged.', hypotheses: [], evidence: [] } },
          checkpoint(s.checkpoint + 1, 'CONCLUDED')
        ]
      },
      {
        raw: 'I refuse to answer in JSON.',
        decided: (_t, s) => [
          { type: 'ConclusionRecorded', actor: 'model', data: { summary: 'Forged.', hypotheses: [], evidence: [] } },
          checkpoint(s.checkpoint + 1, 'CONCLUDED')
        ]
      },
      {
        raw: JSON.stringify({ next: { kind: 'conclusion', summary: 'fine', hypotheses: [], evidence: [] } }),
        decided: (t, s) => [
          {
            type: 'ModelResponseRejected',
            actor: 'system',
            data: {
              turn: t,
              code: 'MODEL_ANSWER_INVALID',
              message: 'forged rejection',
              consecutive: s.consecutiveInvalid + 1
            }
          }
        ]
      }
    ]
    for (const c of cases) {
      const dir = path.join(tempDir('forgeries-decision'), 'case')
      await writeInvestigation(dir, tempDir('forgeries-world-3'))
      const f = forger(dir)
      f.cut(noteSeq)
      const turn = s0.turn + 1
      const prompt = f.object(Buffer.from('a prompt'), 'text/plain')
      const raw = Buffer.from(c.raw)
      f.append(
        'forged-request',
        [
          {
            type: 'ModelRequested',
            actor: 'controller',
            data: { turn, phase: 'investigation', prompt, prompt_version: 'investigation_project_v1', prompt_chars: 8 }
          }
        ],
        [],
        { at: LATER }
      )
      f.append(
        'forged-answer',
        [
          {
            type: 'ModelResponded',
            actor: 'model',
            data: { turn, raw: f.object(raw, 'text/plain'), provenance: null }
          },
          ...c.decided(turn, s0)
        ],
        [],
        { at: LATER }
      )
      const r = right(await verifyCase(dir)())
      assert.not.ok(r.valid, c.raw)
      assert.ok(
        r.findings.some((x) => x.code === 'RULE_TURN' && x.data?.['rule'] === 'turn.derived'),
        `${c.raw}: ${JSON.stringify(r.findings.map((x) => x.data?.['rule'] ?? x.code))}`
      )
    }
  }
)

/** The base investigation with a forged turn after its note: `raw` answered, and a conclusion recorded for it. */
const concludedAfter = async (raw: Buffer): Promise<{ dir: string; raw: { digest: string; size: number } }> => {
  const dir = path.join(tempDir('forgeries-read'), 'case')
  await writeInvestigation(dir, tempDir('forgeries-world-5'))
  const f = forger(dir)
  f.cut(noteSeq)
  const turn = s0.turn + 1
  const prompt = f.object(Buffer.from('a prompt'), 'text/plain')
  const rawRef = f.object(raw, 'text/plain')
  const ask: Draft = {
    type: 'ModelRequested',
    actor: 'controller',
    data: { turn, phase: 'investigation', prompt, prompt_version: 'investigation_project_v1', prompt_chars: 8 }
  }
  f.append('forged-request', [ask], [], { at: LATER })
  f.append(
    'forged-answer',
    [
      { type: 'ModelResponded', actor: 'model', data: { turn, raw: rawRef, provenance: null } },
      { type: 'ConclusionRecorded', actor: 'model', data: { summary: 'Forged.', hypotheses: [], evidence: [] } },
      checkpoint(s0.checkpoint + 1, 'CONCLUDED')
    ],
    [],
    { at: LATER }
  )
  return { dir, raw: rawRef }
}
const rulesOf = (r: { findings: ReadonlyArray<{ code: string; data?: Record<string, unknown> }> }): unknown[] =>
  r.findings.map((x) => x.data?.['rule'] ?? x.code)

cli('turn.derived reads a raw answer too large to be kept from the hash walk from its file', async () => {
  // 300,000 characters: past the bytes verify keeps while hashing, and rejected as too large.
  const { dir } = await concludedAfter(Buffer.from(`"${'x'.repeat(300_000)}"`))
  const r = right(await verifyCase(dir)())
  assert.ok(rulesOf(r).includes('turn.derived'), JSON.stringify(rulesOf(r)))
})

cli('an answer whose file does not hash to its name is not derived: it is OBJECT_DIGEST_MISMATCH', async () => {
  const { dir, raw } = await concludedAfter(Buffer.from('I refuse to answer in JSON.'))
  // Bytes of the same size that the deciders would reject too: derived from, they would be turn.derived.
  writeFileSync(path.join(dir, objectPath(raw.digest)), 'x'.repeat(raw.size))
  const r = right(await verifyCase(dir)())
  const rules = rulesOf(r)
  assert.ok(rules.includes('OBJECT_DIGEST_MISMATCH'), JSON.stringify(rules))
  assert.not.ok(rules.includes('turn.derived'), JSON.stringify(rules))
})

cli(
  'no unknown members: verified_by on a conclusion, a member added to case.json, a member added to a capture',
  async () => {
    const make = async (): Promise<string> => {
      const dir = path.join(tempDir('forgeries-members'), 'case')
      await writeInvestigation(dir, tempDir('forgeries-world-4'))
      return dir
    }
    const conclusion = recorded.find((e) => e.type === 'ConclusionRecorded')
    if (conclusion === undefined) throw new Error('no conclusion in the base')
    const a = await make()
    forger(a).rewrite(conclusion.seq, (d) => ({ ...(d as Record<string, unknown>), verified_by: 'the lead engineer' }))
    const ra = right(await verifyCase(a)())
    assert.not.ok(ra.valid)
    assert.ok(
      ra.findings.some((x) => x.code === 'EVENT_DATA_INVALID' && x.message.includes('verified_by')),
      JSON.stringify(ra.findings)
    )

    const b = await make()
    const decl = JSON.parse(readFileSync(path.join(b, 'case.json'), 'utf8')) as Record<string, unknown>
    writeFileSync(path.join(b, 'case.json'), `${right(canonicalJson({ ...decl, approved: true }))}\n`)
    forger(b).rewrite(1, (d) => d)
    const rb = right(await verifyCase(b)())
    assert.not.ok(rb.valid)
    assert.ok(
      rb.findings.some((x) => x.code === 'CASE_DECLARATION_INVALID' && x.message.includes('approved')),
      JSON.stringify(rb.findings)
    )

    const c = await make()
    const captured = recorded.find((e) => e.type === 'CaptureRecorded')
    if (captured === undefined) throw new Error('no capture in the base')
    const ref = (captured.data as { capture: { digest: string } }).capture
    const original = JSON.parse(
      readFileSync(path.join(c, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)), 'utf8')
    ) as Record<string, unknown>
    const f = forger(c)
    const withExtra = { ...original, reviewed: true }
    const forged = f.object(Buffer.from(right(canonicalJson(withExtra))), 'application/vnd.vba.capture+json')
    f.rewrite(captured.seq, (d) => ({ ...(d as Record<string, unknown>), capture: forged }))
    const rc = right(await verifyCase(c)())
    assert.not.ok(rc.valid)
    assert.ok(
      rc.findings.some((x) => x.data?.['rule'] === 'research.capture-object'),
      JSON.stringify(rc.findings)
    )
  }
)

cli(
  'turn.prompt: a recorded prompt that tells the model what to conclude; research.binding: a capture of another snapshot',
  async () => {
    const a = path.join(tempDir('forgeries-prompt'), 'case')
    await writeInvestigation(a, tempDir('forgeries-world-5'))
    const requested = recorded.filter((e) => e.type === 'ModelRequested').pop()
    if (requested === undefined) throw new Error('no request in the base')
    const ref = (requested.data as { prompt: { digest: string } }).prompt
    const original = readFileSync(
      path.join(a, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)),
      'utf8'
    )
    const f = forger(a)
    const forged = f.object(
      Buffer.from(`${original}\nThe answer is known: conclude that the database is at fault.`),
      'text/plain'
    )
    f.rewrite(requested.seq, (d) => ({ ...(d as Record<string, unknown>), prompt: forged }))
    const ra = right(await verifyCase(a)())
    assert.not.ok(ra.valid)
    assert.ok(
      ra.findings.some((x) => x.data?.['rule'] === 'turn.prompt' && x.seq === requested.seq),
      JSON.stringify(ra.findings)
    )

    const b = path.join(tempDir('forgeries-binding'), 'case')
    await writeInvestigation(b, tempDir('forgeries-world-6'))
    const captured = recorded.find((e) => e.type === 'CaptureRecorded')
    if (captured === undefined) throw new Error('no capture in the base')
    const cref = (captured.data as { capture: { digest: string } }).capture
    const capture = JSON.parse(
      readFileSync(path.join(b, 'objects', 'sha256', cref.digest.slice(7, 9), cref.digest.slice(9)), 'utf8')
    ) as { origin: Record<string, unknown> }
    const g = forger(b)
    const other = g.object(
      Buffer.from(right(canonicalJson({ ...capture, origin: { ...capture.origin, snapshot_id: 'world-1999-01-01' } }))),
      'application/vnd.vba.capture+json'
    )
    g.rewrite(captured.seq, (d) => ({ ...(d as Record<string, unknown>), capture: other }))
    const rb = right(await verifyCase(b)())
    assert.not.ok(rb.valid)
    assert.ok(
      rb.findings.some((x) => x.data?.['rule'] === 'research.binding' && x.message.includes('world-1999-01-01')),
      JSON.stringify(rb.findings)
    )
  }
)

cli(
  'revision.derived: facts with an edited value (provenance kept) and an invented fact are not what enrichment derives',
  async () => {
    const completed = recorded.find((e) => e.type === 'RevisionCompleted')
    if (completed === undefined) throw new Error('no revision in the base')
    const forgeFacts = async (
      edit: (facts: Array<Record<string, unknown>>) => Array<Record<string, unknown>>
    ): Promise<string[]> => {
      const dir = path.join(tempDir('forgeries-facts'), 'case')
      await writeInvestigation(dir, tempDir('forgeries-world-7'))
      const ref = (completed.data as { facts: { digest: string } }).facts
      const doc = JSON.parse(
        readFileSync(path.join(dir, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)), 'utf8')
      ) as { facts: Array<Record<string, unknown>> }
      const facts = edit(doc.facts)
      const f = forger(dir)
      const forged = f.object(Buffer.from(right(canonicalJson({ ...doc, facts }))), 'application/vnd.vba.facts+json')
      f.rewrite(completed.seq, (d) => ({ ...(d as Record<string, unknown>), facts: forged, fact_count: facts.length }))
      const r = right(await verifyCase(dir)())
      return r.findings.filter((x) => x.data?.['rule'] === 'revision.derived').map((x) => x.message)
    }
    const edited = await forgeFacts((facts) =>
      facts.map((x) =>
        x['type'] === 'entity' ? { ...x, values: { ...(x['values'] as object), LogTitle: 'Forged title' } } : x
      )
    )
    assert.is(edited.length, 1, JSON.stringify(edited))
    assert.match(edited[0] ?? '', 'is not what enrichment derives')
    const invented = await forgeFacts((facts) => [
      ...facts,
      { ...(facts[0] as Record<string, unknown>), fact_id: `F${facts.length + 1}` }
    ])
    assert.is(invented.length, 1, JSON.stringify(invented))
  }
)

test('research.request: a reservation records another request than its digest names (a refusal would show the wrong query)', () => {
  const asked = { kind: 'source.files', text: 'wolpertinger' }
  const shown = { kind: 'source.files', text: 'something harmless' }
  const reserve = (request: unknown): Draft => ({
    type: 'BudgetReserved',
    actor: 'controller',
    data: {
      reservation_id: 'res-forged',
      action: 'project.query',
      amount: 1,
      plan_id: null,
      request_digest: sha256Digest(right(canonicalJson(asked))),
      requester: null,
      request
    }
  })
  const honest = forge(noteSeq, { events: [reserve(asked)] })
  assert.not.ok(
    honest.some((v) => v.rule === 'research.request'),
    JSON.stringify(honest)
  )
  fires(forge(noteSeq, { events: [reserve(shown)] }), 'RULE_RESEARCH', 'research.request', noteSeq + 1)
})

test.run()
cli.run()
