/**
 * The ORDER BY of a rows statement. Its columns are the request's (validated identifiers) and the
 * tie-breaker's: the table's key, or all its columns, named as the server's own schema names them,
 * which may hold any character (a view's `x.y`, `p q`, `a"b`). knex reads a dot in a name as
 * `table.column` (`x.y` ordered by a column `y` of a table `x`: every query of such a table
 * failed), so each name is quoted here whole, for its dialect.
 */
import { failure } from '../../failures/failure.js'
import { FailureError } from '../../failures/error.js'
import type { OrderBy } from '../../domain/query.js'

/** `name` as one quoted identifier: SQLite's double quotes, MariaDB/MySQL's backticks, the quote doubled inside. */
const quoted = (sqlite: boolean, name: string): string =>
  sqlite ? `"${name.replaceAll('"', '""')}"` : `\`${name.replaceAll('`', '``')}\``

/**
 * The ORDER BY list as knex raw SQL (no bindings: knex leaves its text as it is). On MariaDB/MySQL
 * a name with `?` cannot be sent: mysql2 binds values client-side and would take it for a
 * placeholder (QUERY_INVALID); SQLite reads a quoted `?` as part of the name.
 */
export const orderBySql = (sqlite: boolean, order: readonly OrderBy[]): string =>
  order
    .map((o) => {
      if (!sqlite && o.column.includes('?'))
        throw new FailureError(
          failure(
            'QUERY_INVALID',
            `the rows cannot be ordered by the table's column ${JSON.stringify(o.column.slice(0, 80))}: a name with ? is not sent to MariaDB/MySQL (the client would read it as a placeholder); give the table a primary key or a unique index without such names`,
            { column: o.column.slice(0, 80) }
          )
        )
      return `${quoted(sqlite, o.column)} ${o.direction === 'desc' ? 'desc' : 'asc'}`
    })
    .join(', ')
