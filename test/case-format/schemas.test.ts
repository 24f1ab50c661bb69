import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, readdirSync } from 'node:fs'
import * as path from 'node:path'
import * as fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import * as E from 'fp-ts/lib/Either.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { caseFormatSchemas } from '../../src/events/schemas.js'
import { EventEnvelope, CaseDeclaration, Head } from '../../src/events/envelope.js'
import { Capture } from '../../src/events/capture.js'
import { repoRoot } from '../helpers/fs.js'

const DIR = path.join(repoRoot(), 'case-format', 'schemas')

const schemas = suite('case-format JSON Schemas')

schemas('the committed schema files equal the schemas generated from the io-ts codecs', () => {
  const generated = caseFormatSchemas()
  assert.equal(
    readdirSync(DIR)
      .filter((f) => f.endsWith('.json'))
      .sort(),
    Object.keys(generated).sort()
  )
  for (const [name, schema] of Object.entries(generated)) {
    assert.equal(
      JSON.parse(readFileSync(path.join(DIR, name), 'utf8')),
      schema,
      `${name} is stale: run npm run schemas`
    )
  }
})

const ajv = new Ajv2020({ strict: true, allErrors: false })
const validator = (name: string) => ajv.compile(JSON.parse(readFileSync(path.join(DIR, name), 'utf8')) as object)

/** Mostly valid values with an occasional invalid one, so both verdicts are exercised often. */
const mostly = <A, B>(valid: fc.Arbitrary<A>, invalid: fc.Arbitrary<B>) =>
  fc.oneof({ arbitrary: valid, weight: 15 }, { arbitrary: invalid, weight: 1 })
const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`))
const digest = mostly(
  hex(64).map((h) => `sha256:${h}`),
  fc.constantFrom('sha256:../../etc/passwd', `sha256:${'A'.repeat(64)}`, '')
)
const ident = mostly(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/), fc.constantFrom('', '../x', 'a b', '-x'))
const ts = mostly(
  fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-01-01', 'yesterday')
)
const int = mostly(fc.integer({ min: 1, max: 1e9 }), fc.constantFrom(-1, 0, 1.5, Number.MAX_SAFE_INTEGER + 2))
const maybe = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined, freq: 8 })

const envelope = fc.record(
  {
    format: mostly(fc.constant('vba-event/1'), fc.constant('vba-event/2')),
    seq: int,
    id: ident,
    type: mostly(fc.stringMatching(/^[A-Z][A-Za-z0-9]{1,10}$/), fc.constantFrom('X', 'lower', 'Has Space')),
    version: int,
    at: ts,
    actor: mostly(fc.constantFrom('operator', 'controller', 'model', 'system'), fc.constant('admin')),
    command_id: ident,
    data: mostly(fc.object(), fc.constantFrom(null, [], 'text')),
    prev: digest,
    hash: digest,
    extra: fc.option(fc.string(), { nil: undefined, freq: 15 })
  },
  { requiredKeys: ['format', 'seq', 'id', 'type', 'version', 'at', 'actor', 'command_id', 'data', 'prev', 'hash'] }
)

/** The envelope codec accepts extra members; the case format refuses them (checked separately). */
const envelopeAccepts = (u: unknown): boolean =>
  E.isRight(EventEnvelope.decode(u)) && Object.keys(u as object).length === 11

schemas('codec and schema agree on generated envelopes, declarations, HEADs and captures', () => {
  const pairs: Array<[string, fc.Arbitrary<unknown>, (u: unknown) => boolean]> = [
    ['event-envelope.schema.json', envelope, envelopeAccepts],
    [
      'case-declaration.schema.json',
      fc.record(
        {
          format: fc.constantFrom('vba-case', 'other'),
          format_version: fc.constantFrom(1, 2),
          case_id: ident,
          created_at: ts,
          title: maybe(fc.string()),
          created_by: maybe(fc.oneof(fc.string(), fc.integer()))
        },
        { requiredKeys: ['format', 'format_version', 'case_id', 'created_at'] }
      ),
      (u) => E.isRight(CaseDeclaration.decode(u))
    ],
    [
      'head.schema.json',
      fc.record({ seq: int, hash: digest, bytes: int }, { requiredKeys: [] }),
      (u) => E.isRight(Head.decode(u))
    ],
    [
      'capture.schema.json',
      fc.record({
        format: fc.constantFrom('vba-capture', 'x'),
        format_version: fc.constantFrom(1, 2),
        schema: fc.constant('project-query-v1'),
        kind: fc.constantFrom('source.read', 'database.rows', 'shell.exec'),
        request: fc.object(),
        settings: fc.object(),
        settings_hash: digest,
        result: fc.object(),
        origin: fc.oneof(
          fc.record({
            type: fc.constant('git'),
            url: fc.string(),
            commit: fc.oneof(hex(40), hex(7)),
            files: fc.array(
              fc.record({ path: fc.string(), blob: hex(40), sha256: fc.oneof(hex(64), hex(3)), size: int })
            )
          }),
          fc.record({
            type: fc.constant('database'),
            client: fc.constantFrom('mysql2', 'better-sqlite3', 'pg'),
            database: fc.string(),
            snapshot_id: fc.string()
          })
        )
      }),
      (u) => E.isRight(Capture.decode(u))
    ]
  ]
  for (const [name, arb, codecAccepts] of pairs) {
    const validate = validator(name)
    let accepted = 0
    fc.assert(
      fc.property(arb, (value) => {
        const clean = JSON.parse(JSON.stringify(value)) as unknown
        const bySchema = validate(clean)
        const byCodec = codecAccepts(clean)
        if (byCodec) accepted++
        return bySchema === byCodec
      }),
      fcOptions(1500)
    )
    assert.ok(accepted > 20, `${name}: enough valid samples (${accepted})`)
  }
})

schemas.run()
