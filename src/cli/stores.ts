/**
 * The CLI's composition root. A verb takes the public client (`openVba`, opened once per command
 * by {@link cliClient}); `--store URL` (or `VBA_STORE`) makes the CASE argument a case id in that
 * SQL store instead of a directory. The verbs the client does not serve (docs/architecture.md, "The
 * CLI and the client") open their store with {@link caseAt} / {@link storeAt}. Everything a
 * command opened is closed once when it ends ({@link closeStores}).
 */
import type { CaseAt } from '../adapters/case-store/store.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import { fail } from '../failures/error.js'
import { openStore } from '../adapters/stores.js'
import type { Vba } from '../index.js'
import { optional } from '../optional.js'

export interface StoreOption {
  readonly store?: string
}

const open = new Map<string, SqlStore>()
let client: { readonly url: string | undefined; readonly vba: Promise<Vba> } | null = null

/**
 * The command's client, on the store at `url` (a case id is then CASE) or on directories: opened
 * on first use, the same one for the rest of the command. The root entry loads only then.
 */
export const cliClient = (url: string | undefined): Promise<Vba> => {
  if (client !== null && client.url !== url) throw new Error('one command opens one client')
  client ??= { url, vba: import('../index.js').then(({ openVba }) => openVba(optional('store', url))) }
  return client.vba
}

/** A store URL as messages show it: without its password. */
export const shownStoreUrl = (url: string): string => {
  const u = new URL(url)
  u.password = ''
  return u.toString()
}

/** The store a printed next command names: the URL without its password (none for a directory). */
export const shownStore = (o: StoreOption): string | undefined => {
  const url = storeUrl(o)
  return url === undefined ? undefined : shownStoreUrl(url)
}

/** The store URL a command uses: --store, else VBA_STORE, else none (a directory). */
export const storeUrl = (o: StoreOption): string | undefined =>
  o.store ?? (process.env['VBA_STORE'] === '' ? undefined : process.env['VBA_STORE'])

/** The store URL of a verb that takes a folder of cases (ROOT) or a store, refusing both at once. */
export const rootOrStoreUrl = (root: string | undefined, o: StoreOption): string | undefined => {
  if (root !== undefined && o.store !== undefined)
    return fail('INVALID_ARGUMENT', 'give ROOT (a folder of case directories) or --store, not both')
  return storeUrl(o)
}

/** Opens (once per command) the store at `url`. */
export const storeAt = async (url: string): Promise<SqlStore> => {
  const known = open.get(url)
  if (known !== undefined) return known
  // openStore loads the SQL store (knex and its drivers) only for a URL that names one.
  const s = await openStore(url)
  open.set(url, s)
  return s
}

/** Where CASE is: a case id in the store, or a directory. */
export const caseAt = async (ref: string, o: StoreOption): Promise<CaseAt> => {
  const url = storeUrl(o)
  return url === undefined ? ref : { store: await storeAt(url), caseId: ref }
}

/** Closes the client and every store this command opened. */
export const closeStores = async (): Promise<void> => {
  const all = [...open.values()]
  open.clear()
  const c = client
  client = null
  await Promise.all([
    ...all.map((s) => s.close().catch(() => undefined)),
    c?.vba.then((v) => v.close()).catch(() => undefined)
  ])
}
