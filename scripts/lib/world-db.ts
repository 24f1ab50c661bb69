/** Loading the fixture world into a MariaDB instance, with a SELECT-only reader. */
import { mysqlFixtureSql } from '../../src/demo/world-fixture.js'

export const READER_USER = 'vba_reader'

/** Loads the fixture world into `world` and (re)creates the SELECT-only reader. */
export const loadWorld = (sql: (text: string) => string, readerPassword: string): void => {
  sql(mysqlFixtureSql('world'))
  sql(
    `${[
      `DROP USER IF EXISTS '${READER_USER}'@'localhost'`,
      `DROP USER IF EXISTS '${READER_USER}'@'127.0.0.1'`,
      `CREATE USER '${READER_USER}'@'localhost' IDENTIFIED BY '${readerPassword}'`,
      `CREATE USER '${READER_USER}'@'127.0.0.1' IDENTIFIED BY '${readerPassword}'`,
      `GRANT SELECT ON world.* TO '${READER_USER}'@'localhost'`,
      `GRANT SELECT ON world.* TO '${READER_USER}'@'127.0.0.1'`,
      'FLUSH PRIVILEGES'
    ].join(';\n')};\n`
  )
}
