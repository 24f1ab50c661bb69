/**
 * `--store URL` (or `VBA_STORE`) on the case verbs: the CASE argument is then a case id in that SQL
 * store instead of a directory. Stores opened by a command are closed when it ends.
 */
import type { CaseAt } from '../adapters/case-store/store.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import { FailureError } from '../failures/error.js'
import { openStore } from '../adapters/stores.js'
import { CliExit, exitCodeOf } from './io.js'

export interface StoreOption {
  readonly store?: string
}

export const STORE_HELP = 'a SQL store (postgres://user@host/db or mysql://user@host/db, a password through ?password_env=VAR; default $VBA_STORE): CASE is then a case id'

const open = new Map<string, SqlStore>()

/** The store URL a command uses: --store, else VBA_STORE, else none (a directory). */
export const storeUrl = (o: StoreOption): string | undefined => o.store ?? (process.env['VBA_STORE'] === '' ? undefined : process.env['VBA_STORE'])

/** Opens (once per command) the store at `url`. */
export const storeAt = async (url: string): Promise<SqlStore> => {
  const known = open.get(url)
  if (known !== undefined) return known
  try {
    // openStore loads the SQL store (knex and its drivers) only for a URL that names one.
    const s = await openStore(url)
    open.set(url, s)
    return s
  } catch (e) {
    if (e instanceof FailureError) throw new CliExit(exitCodeOf(e.failure), e.failure)
    throw e
  }
}

/** Where CASE is: a case id in the store, or a directory. */
export const caseAt = async (ref: string, o: StoreOption): Promise<CaseAt> => {
  const url = storeUrl(o)
  return url === undefined ? ref : { store: await storeAt(url), caseId: ref }
}

/** Closes every store this command opened. */
export const closeStores = async (): Promise<void> => {
  const all = [...open.values()]
  open.clear()
  await Promise.all(all.map((s) => s.close().catch(() => undefined)))
}
