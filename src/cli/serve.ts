/**
 * `vba serve (ROOT | --store URL) [--port N] [--host H]`: a read-only local web page listing the
 * cases (state, block reason, budget left, last activity), each linking to its report. Binds to
 * 127.0.0.1 by default; only GET and HEAD; case ids are looked up in the listing, never used as
 * paths; every page carries the report's Content-Security-Policy (no script, nothing outside).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { failure } from '../domain/failure.js'
import { listDirectoryQueue } from '../adapters/case-store/directory-queue.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { FailureError } from '../adapters/fs-util.js'
import type { QueueEntry } from '../projections/queue.js'
import { esc, escPlain } from '../projections/report-html.js'
import { caseReport } from '../report/case-report.js'
import { VERSION } from '../version.js'
import { CliExit, EXIT } from './io.js'
import type { Out } from './case-verbs.js'
import { storeAt, storeUrl, type StoreOption } from './stores.js'

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

const indexPage = (source: string, entries: readonly QueueEntry[]): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>vba cases</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330}main{max-width:1100px;margin:0 auto;padding:20px}
table{border-collapse:collapse;width:100%;display:block;overflow-x:auto}th,td{border:1px solid #d8dde6;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f4f6f9}
.muted{color:#5b6475}.run{color:#13733b}.wait{color:#8a5a00}</style></head><body><main>
<h1>Cases</h1><p class="muted">${esc(source)} · ${entries.length} case(s), ${entries.filter((e) => e.runnable).length} runnable · read-only · vba ${esc(VERSION)}</p>
<table><thead><tr><th>case</th><th>state</th><th>budget left</th><th>last activity</th><th>queue</th></tr></thead><tbody>
${entries.map((e) => `<tr><td><a href="/case/${encodeURIComponent(e.case_id)}">${esc(e.case_id)}</a>${e.title === null ? '' : `<br><span class="muted">${esc(e.title)}</span>`}</td><td>${esc(e.state)}${e.reason === null ? '' : ` / ${esc(e.reason)}`}</td><td>${e.budget_left === null ? '<span class="muted">-</span>' : String(e.budget_left)}</td><td>${esc(e.last_activity)}</td><td class="${e.runnable ? 'run' : 'wait'}">${e.runnable ? 'runnable' : 'waits'}: ${esc(e.why)}${e.lease === null ? '' : `<br><span class="muted">leased by ${esc(e.lease.worker)} until ${esc(e.lease.expires_at)}</span>`}</td></tr>`).join('\n')}
</tbody></table></main></body></html>
`

const send = (res: ServerResponse, status: number, body: string, head: boolean): void => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
  res.end(head ? undefined : body)
}

const message = (title: string, text: string): string => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}"><title>${escPlain(title)}</title></head><body><h1>${esc(title)}</h1><p>${esc(text)}</p><p><a href="/">all cases</a></p></body></html>\n`

export const serve = async (io: Out, root: string | undefined, o: StoreOption & { port?: string; host?: string }): Promise<void> => {
  const url = storeUrl(o)
  if (root !== undefined && o.store !== undefined) throw new CliExit(EXIT.INPUT, failure('INVALID_ARGUMENT', 'give ROOT (a folder of case directories) or --store, not both'))
  if (root === undefined && url === undefined) throw new CliExit(EXIT.INPUT, failure('INVALID_ARGUMENT', 'name the cases: ROOT (a folder of case directories) or --store URL'))
  const port = o.port === undefined ? 8080 : Number(o.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliExit(EXIT.INPUT, failure('INVALID_ARGUMENT', '--port takes 0-65535 (0: any free port)'))
  const store = root === undefined && url !== undefined ? await storeAt(url) : null
  const source = store === null ? `directory ${root ?? ''}` : store.url
  const list = (): Promise<QueueEntry[]> => (store === null ? listDirectoryQueue(root as string) : store.list())
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const head = req.method === 'HEAD'
    if (req.method !== 'GET' && !head) {
      send(res, 405, message('Method not allowed', 'this page is read-only'), false)
      return
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    try {
      if (path === '/') {
        send(res, 200, indexPage(source, await list()), head)
        return
      }
      const m = /^\/case\/([^/]+)$/.exec(path)
      if (m !== null) {
        const id = decodeURIComponent(m[1] as string)
        const entry = (await list()).find((e) => e.case_id === id)
        if (entry === undefined) {
          send(res, 404, message('No such case', id), head)
          return
        }
        const at: CaseAt = store === null ? (entry.dir as string) : { store, caseId: id }
        send(res, 200, await caseReport(at), head)
        return
      }
      send(res, 404, message('Not found', path), head)
    } catch (e) {
      const f = e instanceof FailureError ? e.failure : failure('INTERNAL_ERROR', e instanceof Error ? e.message : String(e))
      send(res, f.code === 'CASE_CORRUPT' ? 422 : 500, message(f.code, f.message), head)
    }
  }
  const server = createServer((req, res) => {
    void handle(req, res)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new CliExit(EXIT.UNAVAILABLE, failure('IO_ERROR', `cannot listen on ${o.host ?? '127.0.0.1'}:${port} (${e.code ?? 'error'})`))))
    server.listen(port, o.host ?? '127.0.0.1', resolve)
  })
  const address = server.address() as AddressInfo
  io.out(`serving ${source} read-only at http://${address.address}:${address.port}/ (Ctrl-C stops)`)
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      server.close(() => resolve())
      server.closeAllConnections()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}
