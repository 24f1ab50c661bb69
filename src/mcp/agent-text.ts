/**
 * What the server sends an agent shows what it holds, as the CLI and the report show it: text from
 * a case (a report, a hypothesis, a note, a capture, a request) may hold characters that render as
 * nothing or reorder a line (a bidi override U+202E, a zero-width space, a tag character, ESC), and
 * each is sent as a visible code `<U+202E>` (visible-text.ts), line breaks and tabs kept. Only what
 * is sent changes: the case keeps its bytes. The prompt `investigate` and the contract are the
 * recorded prompt and its stable part, sent as they were recorded (see case-resources.ts). Pure.
 */
import { showInvisible } from '../projections/visible-text.js'

/** `text` with every invisible character but a line break or a tab as a visible code. */
export const agentText = (text: string): string => showInvisible(text, { keep: '\n\r\t' })

/**
 * `value` (decoded JSON: a tool answer, its structured content, a resource listing) with every
 * string in it, member names too, through {@link agentText}.
 */
export const agentValue = <T>(value: T): T => visible(value) as T

const visible = (u: unknown): unknown => {
  if (typeof u === 'string') return agentText(u)
  if (Array.isArray(u)) return u.map(visible)
  if (typeof u !== 'object' || u === null) return u
  return Object.fromEntries(Object.entries(u).map(([k, v]) => [agentText(k), visible(v)]))
}

/**
 * A tool answer as sent: its text content through {@link agentText}, its structured content exact.
 * The structured content holds values an agent passes back (a path to read, a row's value to
 * filter on, the same query again at no cost): a value with a marker in it would name another file
 * or another request. As the CLI's `--json`, it is data, not text to read; the text beside it shows
 * what it holds.
 */
export const agentAnswer = <A extends { readonly content: readonly unknown[] }>(answer: A): A => ({
  ...answer,
  content: answer.content.map(visible)
})
