/**
 * `vba serve (ROOT | --store URL) [--port N] [--host H]`: a read-only local web page listing the
 * cases a page at a time (state, block reason, budget left, last activity), each linking to its
 * report, with the counts per state (each a link to its cases) and a link to the next page
 * (`/?state=S&limit=N&after=KEY`, as `vba queue list`); a case's page reads that case only. Binds to
 * 127.0.0.1 by default; only GET and HEAD; cases are looked up in the listing, never used as
 * paths; every page carries the report's Content-Security-Policy (no script, nothing outside).
 *
 * Hostile requests: a Host header that does not name the address served is refused (421), so a web
 * page the operator visits cannot read the cases through DNS rebinding; a malformed URL is a coded
 * 400; nothing from the request is echoed into a page. Each case is read once per change (the
 * listing and the reports are cached by the case's stamp: HEAD and the log's identity), reading
 * one case is bounded in time, and the first SIGINT or SIGTERM stops the server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isIP } from 'node:net'
import * as path from 'node:path'
import { failure } from '../failures/failure.js'
import { caseStamp, directoryQueue, within } from '../adapters/case-store/directory-queue.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import { FailureError, fail, thrownFailure } from '../failures/error.js'
import { QUEUE_STATES, type QueueEntry, type QueuePage } from '../projections/queue.js'
import type { CaseLifecycleState } from '../domain/case-state.js'
import { esc, escPlain } from '../projections/report/render.js'
import { caseReport } from '../report/case-report.js'
import { VERSION } from '../version.js'
import type { Out } from './case-verbs.js'
import { rootOrStoreUrl, storeAt, type StoreOption } from './stores.js'
import { nextSteps } from './next-step.js'
import { terminalText } from './io.js'
import { inspectRun, runText } from '../adapters/case-store/run-marker.js'

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
/** How long one report may take to build before the page says so (the case is read again next time). */
const REPORT_TIMEOUT_MS = 30_000

/** The link of a listed case: its directory's name under a root, its id in a store. */
const slugOf = (e: QueueEntry): string => (e.dir === undefined ? e.case_id : path.basename(e.dir))

/** The listing's query: the page after a key, its size, the states shown (each parameter as the CLI's option). */
interface ListQuery {
  readonly after?: string
  readonly limit?: number
  readonly states?: readonly CaseLifecycleState[]
}

/** A link to the listing with `q` (the parameters are percent-encoded; nothing else of the request is echoed). */
const listLink = (q: ListQuery): string => {
  const p = new URLSearchParams()
  for (const s of q.states ?? []) p.append('state', s)
  if (q.limit !== undefined) p.set('limit', String(q.limit))
  if (q.after !== undefined) p.set('after', q.after)
  const t = p.toString()
  return t === '' ? '/' : `/?${t}`
}

/** The listing's query from the URL's parameters; INVALID_ARGUMENT for a state or size out of bounds. */
const listQuery = (params: URLSearchParams): ListQuery => {
  const states = params.getAll('state')
  const limit = params.get('limit')
  const after = params.get('after')
  if (limit !== null && !/^\d{1,5}$/.test(limit)) fail('INVALID_ARGUMENT', 'limit: a whole number of cases per page')
  // Named without the value given: no page repeats what the request said.
  if (states.some((x) => !(QUEUE_STATES as readonly string[]).includes(x)))
    fail('INVALID_ARGUMENT', `state: one or more of ${QUEUE_STATES.join(', ')}`)
  return {
    ...(after === null || after === '' ? {} : { after }),
    ...(limit === null ? {} : { limit: Number(limit) }),
    ...(states.length === 0 ? {} : { states: states as CaseLifecycleState[] })
  }
}

const withoutAfter = ({ after: _after, ...rest }: ListQuery): ListQuery => rest

/** The counts, each state a link to its cases, and the link to the next page (or that this is the last). */
const pageHeader = (page: QueuePage, q: ListQuery): string => {
  const c = page.counts
  const counts =
    c === null
      ? ''
      : `${c.total} case(s), ${c.runnable} runnable: ${QUEUE_STATES.filter((s) => (c.by_state[s] ?? 0) > 0)
          .map(
            (s) =>
              `<a href="${esc(listLink({ states: [s], ...(q.limit === undefined ? {} : { limit: q.limit }) }))}">${esc(s)}</a> ${c.by_state[s]}`
          )
          .join(', ')}`
  const shown = `${page.entries.length} shown${q.states === undefined ? '' : ` in ${esc(q.states.join(', '))} (<a href="${esc(listLink({}))}">all</a>)`}${q.after === undefined ? '' : ` on a later page (<a href="${esc(listLink(withoutAfter(q)))}">first page</a>)`}`
  const next =
    page.next === null
      ? 'the last page'
      : `<a rel="next" href="${esc(listLink({ ...q, after: page.next }))}">next page</a>`
  return `${counts} · ${shown} · ${next}`
}

const indexPage = (source: string, page: QueuePage, q: ListQuery): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>vba cases</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330}main{max-width:1100px;margin:0 auto;padding:20px}
table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}th,td{border:1px solid #d8dde6;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f4f6f9}
.muted{color:#5b6475}.run{color:#13733b}.wait{color:#8a5a00}.cc{color:#b3261e;font-family:monospace;font-size:12px}</style></head><body><main>
<h1>Cases</h1><p class="muted">${esc(source)} · read-only · vba ${esc(VERSION)}</p><p>${pageHeader(page, q)}</p>
<table><thead><tr><th>case</th><th>state</th><th>budget left</th><th>last activity</th><th>queue</th></tr></thead><tbody>
${page.entries
  .map(
    (e) =>
      `<tr><td><a href="/case/${encodeURIComponent(slugOf(e))}">${esc(e.case_id)}</a>${e.dir === undefined ? '' : ` <span class="muted">(${esc(path.basename(e.dir))})</span>`}${e.title === null ? '' : `<br><span class="muted">${esc(e.title)}</span>`}</td><td>${esc(e.state)}${e.reason === null ? '' : ` / ${esc(e.reason)}`}</td><td>${e.budget_left === null ? '<span class="muted">-</span>' : String(e.budget_left)}</td><td>${esc(e.last_activity)}</td><td class="${e.runnable ? 'run' : 'wait'}">${e.runnable ? 'runnable' : 'waits'}: ${esc(e.why)}${e.lease === null ? '' : `<br><span class="muted">leased by ${esc(e.lease.worker)} until ${esc(e.lease.expires_at)}</span>`}${(e.why.startsWith(
        'being advanced'
      )
        ? []
        : nextSteps(
            { ...e, lab_requests: [], prepared: e.revision > 0 },
            e.dir ?? e.case_id,
            e.dir === undefined ? source : undefined
          )
      )
        .map((l) => `<br><code>${esc(l)}</code>`)
        .join('')}</td></tr>`
  )
  .join('\n')}
</tbody></table><p>${pageHeader(page, q)}</p></main></body></html>
`

/**
 * A listed directory case with its run marker read (never cached: it changes without the log): a
 * case a process advances waits for it, the process named; one whose process is gone says so.
 */
const withRun = async (e: QueueEntry): Promise<QueueEntry> => {
  const run = e.dir === undefined ? ({ state: 'none' } as const) : await inspectRun(e.dir).catch(() => null)
  const text = run === null ? null : runText(run)
  if (run === null || text === null) return e
  return run.state === 'running' ? { ...e, runnable: false, why: text } : { ...e, why: `${e.why}; ${text}` }
}

const send = (res: ServerResponse, status: number, body: string, head: boolean): void => {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer'
  })
  res.end(head ? undefined : body)
}

/** A page about a request: its texts are the server's own, never the request's. */
const message = (title: string, text: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}"><title>${escPlain(title)}</title></head><body><h1>${esc(title)}</h1><p>${esc(text)}</p><p><a href="/">all cases</a></p></body></html>\n`

/**
 * Whether a Host header names this server: `host:port` where host is the address bound, or a
 * loopback name or address when the server is bound to loopback; for a wildcard bind, any IP
 * literal (a DNS name could be rebound to this machine by a stranger's page).
 */
export const hostAllowed = (header: string | undefined, bound: string, port: number): boolean => {
  if (header === undefined) return false
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(header.trim().toLowerCase())
  if (m === null || Number(m[2]) !== port) return false
  const host = (m[1] as string).replace(/^\[|\]$/g, '')
  const loopback = (h: string): boolean =>
    h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  if (host === bound.toLowerCase()) return true
  if (loopback(bound)) return loopback(host)
  if (bound === '0.0.0.0' || bound === '::') return isIP(host) !== 0 || host === 'localhost'
  return false
}

/** What answering a request needs: the cases, and the address the server is bound to (set once it listens). */
interface Served {
  source: string
  page: (q: ListQuery) => Promise<QueuePage>
  /** The listed case of a link, or null. */
  entry: (slug: string) => Promise<QueueEntry | null>
  reportOf: (entry: QueueEntry) => Promise<string>
  bound: string
  boundPort: number
}

/** A case's report, built at most once per change of the case (cached by stamp for a directory, by head for a store). */
const reportCache = (store: SqlStore | null): ((entry: QueueEntry) => Promise<string>) => {
  // Reports by case, kept while the case's stamp (a directory) or head (a store) is unchanged.
  const reports = new Map<string, { stamp: string; html: string }>()
  return async (entry: QueueEntry): Promise<string> => {
    const at: CaseAt = store === null ? (entry.dir as string) : { store, caseId: entry.case_id }
    const key = slugOf(entry)
    const stamp = store === null ? caseStamp(entry.dir as string) : `${entry.generation}|${entry.last_activity}`
    const known = reports.get(key)
    if (stamp !== null && known?.stamp === stamp) return known.html
    const html = await within(caseReport(at), REPORT_TIMEOUT_MS, () => {
      throw new FailureError(failure('IO_ERROR', `reading the case took longer than ${REPORT_TIMEOUT_MS / 1000} s`))
    })
    if (stamp !== null && (store !== null || caseStamp(entry.dir as string) === stamp))
      reports.set(key, { stamp, html })
    return html
  }
}

/** Answers a well-formed GET or HEAD: the listing at /, a case's report under /case/, else 404; failures as coded pages. */
const route = async (
  served: Served,
  pathname: string,
  params: URLSearchParams,
  slug: string | null,
  res: ServerResponse,
  head: boolean
): Promise<void> => {
  try {
    if (pathname === '/') {
      const q = listQuery(params)
      send(res, 200, indexPage(served.source, await served.page(q), q), head)
      return
    }
    if (slug !== null) {
      const entry = await served.entry(slug)
      if (entry === null) {
        send(res, 404, message('No such case', 'no listed case has this name'), head)
        return
      }
      send(res, 200, await served.reportOf(entry), head)
      return
    }
    send(res, 404, message('Not found', 'this server has the listing at / and the reports under /case/'), head)
  } catch (e) {
    const f = thrownFailure(e)
    const status =
      f.code === 'CASE_CORRUPT' ? 422 : f.code === 'IO_ERROR' ? 503 : f.code === 'INVALID_ARGUMENT' ? 400 : 500
    send(res, status, message(f.code, f.message), head)
  }
}

/** Answers one request: refuses a foreign Host, a method other than GET or HEAD and a malformed URL, then routes it. */
const handle = async (served: Served, req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const { bound, boundPort } = served
  const head = req.method === 'HEAD'
  if (!hostAllowed(req.headers.host, bound, boundPort)) {
    send(
      res,
      421,
      message('Misdirected request', `this server answers only requests for http://${bound}:${boundPort}/`),
      head
    )
    return
  }
  if (req.method !== 'GET' && !head) {
    send(res, 405, message('Method not allowed', 'this page is read-only'), false)
    return
  }
  let slug: string | null = null
  let pathname: string
  let params: URLSearchParams
  try {
    const u = new URL(req.url ?? '/', 'http://localhost')
    pathname = u.pathname
    params = u.searchParams
    const m = /^\/case\/([^/]+)$/.exec(pathname)
    if (m !== null) slug = decodeURIComponent(m[1] as string)
  } catch {
    send(res, 400, message('INVALID_ARGUMENT', 'the URL is malformed (bad percent-encoding)'), head)
    return
  }
  await route(served, pathname, params, slug, res, head)
}

/** Starts listening on host:port; a failure to bind is an UNAVAILABLE exit. */
const listen = (server: Server, host: string, port: number): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new FailureError(failure('IO_ERROR', `cannot listen on ${host}:${port} (${e.code ?? 'error'})`)))
    )
    server.listen(port, host, resolve)
  })

/** Resolves once the first SIGINT or SIGTERM has closed the server. */
const untilStopped = (server: Server): Promise<void> =>
  new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      server.close(() => resolve())
      server.closeAllConnections()
      // A read the kernel does not give back (a hung network file system) must not keep the
      // process: once the server is closed, it ends shortly even if such a read is pending.
      setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })

export const serve = async (
  io: Out,
  root: string | undefined,
  o: StoreOption & { port: number; host: string }
): Promise<void> => {
  const url = rootOrStoreUrl(root, o)
  if (root === undefined && url === undefined)
    fail('INVALID_ARGUMENT', 'name the cases: ROOT (a folder of case directories) or --store URL')
  const port = o.port
  const store = root === undefined && url !== undefined ? await storeAt(url) : null
  const source = store === null ? `directory ${root ?? ''}` : store.url
  const queue = store === null ? directoryQueue(root as string, { summaries: true }) : null
  const page = async (q: ListQuery): Promise<QueuePage> => {
    if (queue === null) return (store as NonNullable<typeof store>).page(q)
    const p = await queue.page(q)
    return { ...p, entries: await Promise.all(p.entries.map(withRun)) }
  }
  const entry = async (slug: string): Promise<QueueEntry | null> => {
    if (queue === null) return (store as NonNullable<typeof store>).entry(slug)
    const found = (await queue.list()).find((e) => slugOf(e) === slug) ?? null
    // Listed from its summary, maybe: an opened case's log is checked, and listed as it says.
    if (found?.dir !== undefined) await queue.check(found.dir)
    return found
  }
  const served: Served = { source, page, entry, reportOf: reportCache(store), bound: o.host, boundPort: port }
  const server = createServer((req, res) => {
    void handle(served, req, res)
  })
  await listen(server, o.host, port)
  const address = server.address() as AddressInfo
  served.bound = address.address
  served.boundPort = address.port
  io.out(
    terminalText(
      `serving ${source} read-only at http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/ (Ctrl-C stops)`
    )
  )
  await untilStopped(server)
}
