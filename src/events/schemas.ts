/** The JSON Schema documents of the case format, generated from the codecs. */
import { CaseDeclaration, EventEnvelope, Head } from './envelope.js'
import { Capture } from './capture.js'
import { schemaDocument, type JsonSchema } from './json-schema.js'

const BASE = 'https://vba.invalid/case-format/v1/'

/** File name in case-format/schemas → schema document. */
export const caseFormatSchemas = (): Record<string, JsonSchema> => ({
  'case-declaration.schema.json': schemaDocument(
    `${BASE}case-declaration.schema.json`,
    'case.json',
    CaseDeclaration,
    'The case declaration, written once when a case is created.'
  ),
  'event-envelope.schema.json': schemaDocument(
    `${BASE}event-envelope.schema.json`,
    'Event envelope',
    EventEnvelope,
    'One line of events.jsonl (RFC 8785 canonical JSON). hash = SHA-256 of the canonical envelope without hash.'
  ),
  'head.schema.json': schemaDocument(
    `${BASE}head.schema.json`,
    'HEAD',
    Head,
    'The last acknowledged event: its seq, hash and the byte length of events.jsonl through its line.'
  ),
  'capture.schema.json': schemaDocument(
    `${BASE}capture.schema.json`,
    'Capture (format_version 1)',
    Capture,
    'The immutable record of one project.query: request, origin, settings and result.'
  )
})
