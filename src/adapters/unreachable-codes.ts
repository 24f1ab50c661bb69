/**
 * The error codes a database driver's connection gives when the server cannot be reached or takes
 * no more connections (Node's sockets, and mysql2's own): the world database and the SQL store
 * each add their drivers' other codes for the same meaning.
 */
export const UNREACHABLE_CODES = [
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ECONNRESET',
  'PROTOCOL_CONNECTION_LOST',
  'EPIPE',
  'ER_CON_COUNT_ERROR'
] as const
