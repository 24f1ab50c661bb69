/**
 * io-ts codecs to JSON Schema (2020-12), for the subset of io-ts the case format uses. The JSON
 * Schemas in case-format/schemas are generated from the codecs with this, and a test keeps the
 * committed files equal to the output, so the codec stays the single source of truth.
 */
import type * as t from 'io-ts'
import { schemaHints } from './codecs.js'

export type JsonSchema = { readonly [k: string]: unknown }

interface Tagged {
  readonly _tag?: string
  readonly name: string
}

/** Codec-level schema keywords (e.g. additionalProperties: false) beyond what io-ts expresses. */
export const objectHints = new WeakMap<t.Any, JsonSchema>()

const asTagged = (c: t.Any): Tagged & Record<string, unknown> => c as unknown as Tagged & Record<string, unknown>

export const toJsonSchema = (codec: t.Any): JsonSchema => {
  const hint = schemaHints.get(codec)
  if (hint !== undefined) return { ...hint }
  const c = asTagged(codec)
  const extra = objectHints.get(codec) ?? {}
  switch (c._tag) {
    case 'StringType':
      return { type: 'string' }
    case 'NumberType':
      return { type: 'number' }
    case 'BooleanType':
      return { type: 'boolean' }
    case 'NullType':
      return { type: 'null' }
    case 'UnknownType':
      return {}
    case 'UnknownRecordType':
    case 'AnyDictionaryType':
      return { type: 'object' }
    case 'LiteralType':
      return { const: c['value'] }
    case 'KeyofType':
      return { enum: Object.keys(c['keys'] as object) }
    case 'ArrayType':
      return { type: 'array', items: toJsonSchema(c['type'] as t.Any) }
    case 'InterfaceType': {
      const props = c['props'] as Record<string, t.Any>
      return { type: 'object', properties: mapProps(props), required: Object.keys(props), ...extra }
    }
    case 'PartialType':
      return { type: 'object', properties: mapProps(c['props'] as Record<string, t.Any>), ...extra }
    case 'IntersectionType': {
      const parts = (c['types'] as t.Any[]).map(toJsonSchema)
      if (parts.every((p) => p['type'] === 'object')) {
        return {
          type: 'object',
          properties: Object.assign({}, ...parts.map((p) => p['properties'] ?? {})),
          required: parts.flatMap((p) => (p['required'] as string[] | undefined) ?? []),
          ...extra
        }
      }
      return { allOf: parts }
    }
    case 'UnionType':
      return { anyOf: (c['types'] as t.Any[]).map(toJsonSchema) }
    case 'DictionaryType':
      return { type: 'object', additionalProperties: toJsonSchema(c['codomain'] as t.Any) }
    default:
      throw new TypeError(`toJsonSchema: unsupported codec ${c.name} (${c._tag ?? 'custom'}); give it a schema hint`)
  }
}

const mapProps = (props: Record<string, t.Any>): Record<string, JsonSchema> =>
  Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toJsonSchema(v)]))

/** A complete schema document with $schema, $id and title. */
export const schemaDocument = (id: string, title: string, codec: t.Any, description: string): JsonSchema => ({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: id,
  title,
  description,
  ...toJsonSchema(codec)
})
