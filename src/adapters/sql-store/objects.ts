/**
 * The objects of a SQL store (`vba_objects`: content-addressed, shared by all cases): inserted if
 * absent (one at a time, and not sent at all when the store has it), read whole and checked, or
 * read in slices for a bag (so exporting a large object holds a slice, not the object). On MariaDB/MySQL an object is checked against the server's
 * `max_allowed_packet` before anything is sent: the driver sends it hex-escaped in one statement,
 * and a server refusing a larger packet drops the connection, which would look like an outage.
 * Such an object is OBJECT_TOO_LARGE (permanent: raise the server's limit), and nothing is written.
 */
import type { Knex } from 'knex'
import { failure } from '../../failures/failure.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import { sha256Digest } from '../../events/canonical.js'
import { objectPath } from '../../events/refs.js'
import { FailureError } from '../../failures/error.js'

const buf = (v: unknown): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array))

/** Bytes of one chunk read for a bag. */
const CHUNK = 2 << 20

/** One object to insert: its bytes, or where to read them when it is its turn (one at a time). */
export type NewObject =
  | Uint8Array
  | { readonly digest: string; readonly size: number; readonly read: () => Promise<Uint8Array> }

export interface StoreObjects {
  readonly insert: (trx: Knex.Transaction, objects: Iterable<NewObject>) => Promise<void>
  readonly read: (q: Knex | Knex.Transaction, object: ObjectRefLite) => Promise<Buffer>
  readonly readMany: (q: Knex | Knex.Transaction, digests: readonly string[]) => Promise<Map<string, Buffer>>
  /** The bytes of an object in chunks (a missing object is CASE_CORRUPT, as for a bag of a directory). */
  readonly chunks: (k: Knex, digest: string, size: number) => AsyncIterable<Buffer>
}

/** The bytes of one object, checked against its digest and size. */
const readObject = async (q: Knex | Knex.Transaction, object: ObjectRefLite): Promise<Buffer> => {
  const row = (await q('vba_objects').select('bytes').where({ digest: object.digest }).first()) as
    | Record<string, unknown>
    | undefined
  if (row === undefined)
    throw new FailureError(failure('OBJECT_MISSING', `object ${object.digest} is missing`, { digest: object.digest }))
  const bytes = buf(row['bytes'])
  if (bytes.length !== object.size || sha256Digest(bytes) !== object.digest)
    throw new FailureError(
      failure('OBJECT_CORRUPT', `object ${object.digest} does not match its digest or size`, {
        digest: object.digest
      })
    )
  return bytes
}

/** The bytes of many objects by digest (200 a query); a missing one is absent from the map. */
const readObjects = async (q: Knex | Knex.Transaction, digests: readonly string[]): Promise<Map<string, Buffer>> => {
  const out = new Map<string, Buffer>()
  for (let i = 0; i < digests.length; i += 200) {
    const rows = (await q('vba_objects')
      .select('digest', 'bytes')
      .whereIn('digest', digests.slice(i, i + 200))) as Array<Record<string, unknown>>
    for (const r of rows) out.set(String(r['digest']), buf(r['bytes']))
  }
  return out
}

export const storeObjects = (dialect: 'postgres' | 'mysql'): StoreObjects => {
  let maxPacket: number | undefined
  const packetLimit = async (q: Knex | Knex.Transaction): Promise<number | null> => {
    if (dialect !== 'mysql') return null
    if (maxPacket === undefined) {
      const r = (await q.raw('SELECT @@max_allowed_packet AS m')) as [Array<{ m: unknown }>]
      maxPacket = Number(r[0][0]?.m ?? 0)
    }
    return maxPacket
  }
  const tooLarge = (digest: string, size: number, limit: number): FailureError =>
    new FailureError(
      failure(
        'OBJECT_TOO_LARGE',
        `object ${digest} (${size} bytes) is larger than the store's server accepts in one statement (max_allowed_packet ${limit} bytes; the object is sent hex-escaped, twice its size): raise max_allowed_packet`,
        { digest, size, max_allowed_packet: limit }
      )
    )

  const insert = async (trx: Knex.Transaction, objects: Iterable<NewObject>): Promise<void> => {
    const limit = await packetLimit(trx)
    const items = [...objects].map((o) =>
      o instanceof Uint8Array ? { digest: sha256Digest(o), size: o.byteLength, read: async () => o } : o
    )
    // Every size is checked before the first row is sent; sorted, so two transactions inserting
    // the same objects take their locks in the same order.
    for (const o of items) if (limit !== null && 2 * o.size + 1024 > limit) throw tooLarge(o.digest, o.size, limit)
    items.sort((a, b) => (a.digest < b.digest ? -1 : 1))
    for (const o of items) {
      // An object the store already holds is not read or sent again (objects are shared by cases).
      if ((await trx('vba_objects').select('digest').where({ digest: o.digest }).first()) !== undefined) continue
      const b = await o.read()
      await trx('vba_objects')
        .insert({ digest: o.digest, size: b.byteLength, bytes: Buffer.from(b.buffer, b.byteOffset, b.byteLength) })
        .onConflict('digest')
        .ignore()
    }
  }

  /**
   * How many bytes each slice reads. A slice of a value the server stored compressed (PostgreSQL's
   * TOAST) or reads whole for every slice (MariaDB's blobs) costs a read from the start, so such a
   * value is read in at most sixteen slices; an uncompressed PostgreSQL value in slices of 2 MiB.
   */
  const sliceBytes = async (k: Knex, digest: string, size: number): Promise<number> => {
    if (dialect === 'postgres') {
      const r = (await k('vba_objects').select(k.raw('pg_column_compression(bytes) AS c')).where({ digest }).first()) as
        | Record<string, unknown>
        | undefined
      if (r !== undefined && (r['c'] === null || r['c'] === undefined)) return CHUNK
    }
    return Math.max(CHUNK, Math.ceil(size / 16))
  }

  async function* chunks(k: Knex, digest: string, size: number): AsyncIterable<Buffer> {
    const slice = dialect === 'postgres' ? 'substring(bytes from ? for ?) AS part' : 'SUBSTRING(bytes, ?, ?) AS part'
    const step = size === 0 ? CHUNK : await sliceBytes(k, digest, size)
    for (let at = 0; at < size; at += step) {
      const r = (await k('vba_objects')
        .select(k.raw(slice, [at + 1, step]))
        .where({ digest })
        .first()) as Record<string, unknown> | undefined
      if (r === undefined)
        throw new FailureError(
          failure('CASE_CORRUPT', `object ${digest} is missing`, {
            findings: [
              {
                code: 'OBJECT_MISSING',
                severity: 'error',
                message: 'referenced object is missing',
                path: objectPath(digest)
              }
            ]
          })
        )
      const part = buf(r['part'])
      // A shorter object ends early; the bag's size and digest check says it is corrupt.
      if (part.length === 0) return
      yield part
    }
  }

  return { insert, read: readObject, readMany: readObjects, chunks }
}
