/**
 * The shapes a report file may have, told apart by their content: REPORT.json (`{report,
 * entities, attachments?}`), the JSON that `gh issue view N --json number,title,body,url,labels,comments`
 * prints (its URL becomes the report's origin), or any other text (Markdown or plain), taken as
 * the report itself. Pure: text in, the report's parts out.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { EntityRef } from '../domain/enrichment-config.js'
import { ReportOrigin } from '../events/catalog.js'
import { describeErrors } from '../events/decode.js'
import { parseBoundedJson } from '../events/bounds.js'

/**
 * REPORT.json: `{report, entities?: [{type, id}], attachments?: [{name, path}], origin?}` (paths
 * relative to the file); without `entities`, the report's own ids are what extraction finds.
 */
export const ReportFile = t.intersection(
  [
    t.type({ report: t.string }),
    t.partial({
      entities: t.array(EntityRef),
      title: t.string,
      origin: ReportOrigin,
      attachments: t.array(t.type({ name: t.string, path: t.string }))
    })
  ],
  'ReportFile'
)

/** What `gh issue view N --json number,title,body,url,labels,comments` prints (other members are ignored). */
export const GithubIssue = t.intersection(
  [
    t.type({ title: t.string, body: t.string }),
    t.partial({
      number: t.number,
      url: t.string,
      labels: t.array(t.type({ name: t.string })),
      comments: t.array(
        t.partial({ author: t.union([t.partial({ login: t.string }), t.null]), body: t.string, createdAt: t.string })
      )
    })
  ],
  'GithubIssue'
)
export type GithubIssue = t.TypeOf<typeof GithubIssue>

/** The format a report file was read as. */
export type ReportFormat = 'report-json' | 'github-issue' | 'text'

/** A report file's parts: the report text, listed entities, attachment paths, and its origin when it has one. */
export interface ParsedReport {
  readonly format: ReportFormat
  readonly report: string
  readonly entities: ReadonlyArray<EntityRef>
  readonly attachments: ReadonlyArray<{ readonly name: string; readonly path: string }>
  readonly origin: string | null
  /** The report's own title: REPORT.json's `title`, the issue's title, or a text's leading `# ` heading. */
  readonly title: string | null
}

const lf = (s: string): string => s.replace(/\r\n?/g, '\n').trim()

/** The report text of an exported issue: its title as a heading, the body, the labels, then each comment. */
export const githubIssueText = (issue: GithubIssue): string => {
  const parts = [`# ${lf(issue.title)}`]
  if (lf(issue.body) !== '') parts.push(lf(issue.body))
  const labels = (issue.labels ?? []).map((l) => l.name).filter((n) => n.trim() !== '')
  if (labels.length > 0) parts.push(`Labels: ${labels.join(', ')}`)
  const comments = (issue.comments ?? []).filter((c) => lf(c.body ?? '') !== '')
  if (comments.length > 0) {
    parts.push('## Comments')
    for (const c of comments) {
      const who = c.author?.login ?? 'someone'
      parts.push(`### ${who}${c.createdAt === undefined ? '' : `, ${c.createdAt}`}`, lf(c.body ?? ''))
    }
  }
  return `${parts.join('\n\n')}\n`
}

const looksLikeJson = (text: string): boolean => /^\s*[{[]/.test(text)

/**
 * Reads a report file's text by its shape. `name` is the file's name (for messages, and a `.json`
 * file must be JSON). Left (INPUT_INVALID) for JSON of neither shape.
 */
export const parseReportText = (text: string, name: string): E.Either<Failure, ParsedReport> => {
  let parsed: unknown
  let isJson = false
  if (looksLikeJson(text) || name.toLowerCase().endsWith('.json')) {
    const bounded = parseBoundedJson(text)
    if (E.isRight(bounded)) {
      parsed = bounded.right
      isJson = true
    } else if (name.toLowerCase().endsWith('.json') || !bounded.left.startsWith('not JSON'))
      return E.left(failure('INPUT_INVALID', `cannot read ${name} as JSON: ${bounded.left}`))
  }
  if (!isJson) {
    const heading = /^\s*# +(\S[^\n]*?)\s*(?:\n|$)/.exec(text)?.[1] ?? null
    return E.right({ format: 'text', report: text, entities: [], attachments: [], origin: null, title: heading })
  }
  const obj =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}
  if ('report' in obj) {
    const d = ReportFile.decode(parsed)
    if (E.isLeft(d)) return E.left(failure('INPUT_INVALID', `the inputs are invalid: ${describeErrors(d.left)}`))
    return E.right({
      format: 'report-json',
      report: d.right.report,
      entities: d.right.entities ?? [],
      attachments: d.right.attachments ?? [],
      origin: d.right.origin ?? null,
      title: d.right.title ?? null
    })
  }
  if ('title' in obj && 'body' in obj) {
    const d = GithubIssue.decode(parsed)
    if (E.isLeft(d)) return E.left(failure('INPUT_INVALID', `the exported issue is invalid: ${describeErrors(d.left)}`))
    const url = d.right.url
    if (url !== undefined && E.isLeft(ReportOrigin.decode(url)))
      return E.left(
        failure('INPUT_INVALID', `the exported issue's url is not an http(s) address of at most 2048 characters`)
      )
    return E.right({
      format: 'github-issue',
      report: githubIssueText(d.right),
      entities: [],
      attachments: [],
      origin: url ?? null,
      title: lf(d.right.title)
    })
  }
  return E.left(
    failure(
      'INPUT_INVALID',
      `${name} is JSON of neither input shape: REPORT.json ({report, entities}) or an issue exported with gh issue view N --json number,title,body,url,labels,comments`
    )
  )
}
