/**
 * Pipelining for mysql2: the statements of one read-only query (begin, the query, commit) go out in
 * one write and their replies are read in order, one round trip instead of three (bench/db-rows).
 */
import type mysql from 'mysql2'

/**
 * A callback-API query as a promise (mysql2/promise captures a stack trace per query), and mysql2's
 * command (for {@link pipelined}).
 */
export const sent = (
  conn: mysql.PoolConnection,
  sql: string | mysql.QueryOptions,
  values?: unknown[]
): { readonly done: Promise<unknown>; readonly command: unknown } => {
  let command: unknown
  const done = new Promise((resolve, reject) => {
    command = conn.query(sql as mysql.QueryOptions, values ?? [], (err: unknown, rows: unknown) =>
      err ? reject(err) : resolve(rows)
    )
  })
  return { done, command }
}

/** The parts of a mysql2 (3.x) connection that pipelining uses; checked before each use. */
interface Wire {
  readonly stream: { readonly cork: () => void; readonly uncork: () => void }
  sequenceId: number
  readonly config: { readonly compress?: boolean }
  readonly _command: unknown
  readonly _commands: { readonly length: number; readonly get: (index: number) => unknown }
}

/** A mysql2 command not started yet: `start` writes its packet and returns the state that reads the reply. */
interface Unstarted {
  start: (packet: undefined, conn: Wire) => unknown
  readonly next: unknown
}

const isWire = (c: unknown): c is Wire => {
  const w = c as Partial<Wire>
  return (
    typeof w.stream?.cork === 'function' &&
    typeof w.stream.uncork === 'function' &&
    typeof w.sequenceId === 'number' &&
    w.config?.compress !== true &&
    typeof w._commands?.get === 'function'
  )
}

const isUnstarted = (c: unknown): c is Unstarted => {
  const u = c as Partial<Unstarted> | null
  return typeof u?.start === 'function' && (u.next === null || u.next === undefined)
}

/**
 * Sends the statements `send` queues on an idle connection in one write, instead of one round trip
 * each. mysql2 writes a command only once the one before it has finished; the commands queued
 * behind the first are started here at once (their packets written, each numbered as the first
 * packet of a command, as mysql2 numbers it) and read their replies, which the server sends in
 * order, when their turn comes. Where the connection does not look as expected (another mysql2),
 * the statements run one after another, as mysql2 runs them.
 */
export const pipelined = <T>(
  conn: mysql.PoolConnection,
  send: () => { readonly result: T; readonly commands: unknown[] }
): T => {
  const wire: unknown = conn
  if (!isWire(wire)) return send().result
  wire.stream.cork()
  try {
    const { result, commands } = send()
    const [first, ...rest] = commands
    const queuedInOrder =
      wire._command === first &&
      !isUnstarted(first) &&
      wire._commands.length === rest.length &&
      rest.every((c, i) => wire._commands.get(i) === c && isUnstarted(c))
    if (queuedInOrder) for (const c of rest as Unstarted[]) startNow(wire, c)
    return result
  } finally {
    wire.stream.uncork()
  }
}

const startNow = (wire: Wire, command: Unstarted): void => {
  const own = wire.sequenceId
  wire.sequenceId = 0
  const reading = command.start(undefined, wire)
  wire.sequenceId = own
  // Its turn: the packet (number 0) is out already, its reply is numbered 1.
  command.start = () => {
    wire.sequenceId = 1
    return reading
  }
}
