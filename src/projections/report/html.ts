/**
 * HTML text for the case report: escaping (every invisible character shown as a marked code,
 * never obeyed), links of known ids to their anchors, the tolerant readers of decoded JSON the
 * page uses, and its one stylesheet.
 */
import { showInvisible } from '../visible-text.js'

export const str = (u: unknown): string => (typeof u === 'string' ? u : u === undefined ? '' : String(u))

const htmlEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

/**
 * HTML-escapes text and shows every invisible character (bidi, zero-width, tag characters,
 * controls: see visible-text.ts) as a marked code, so text cannot reorder or hide itself.
 */
export const esc = (text: string): string =>
  showInvisible(htmlEscape(text), {
    keep: '\n\r\t',
    mark: (label) => `<span class="cc" title="invisible character">&lt;${label}&gt;</span>`
  })

/** Plain text for places that hold no markup (`<title>`): invisible characters as `<U+XXXX>` text. */
export const escPlain = (text: string): string => htmlEscape(showInvisible(text))

/** The evidence and hypothesis ids of a case, which its page links to their anchors. */
export interface KnownIds {
  readonly evidence: ReadonlySet<string>
  readonly hypotheses: ReadonlySet<string>
}

/** Escaped text in which every known E… and H… id links to its anchor. */
export const linked = (text: string, known: KnownIds): string =>
  esc(text).replace(/\b([EH]\d{1,6})\b/g, (m) =>
    known.evidence.has(m) || known.hypotheses.has(m) ? `<a href="#${m}">${m}</a>` : m
  )

/** The ids of a list as links to their anchors (an unknown id is marked; an empty list says none). */
export const refLinks = (list: readonly string[], known: KnownIds): string =>
  list.length === 0
    ? '<span class="muted">none</span>'
    : list
        .map((x) =>
          known.evidence.has(x) || known.hypotheses.has(x)
            ? `<a href="#${escPlain(x)}">${esc(x)}</a>`
            : `<span class="bad" title="unknown id">${esc(x)}</span>`
        )
        .join(', ')

export const utf8 = (b: Uint8Array | undefined): string | null => (b === undefined ? null : new TextDecoder().decode(b))

export const STYLE = `
:root{--fg:#1d2330;--muted:#5b6475;--line:#d8dde6;--bg:#ffffff;--soft:#f4f6f9;--ok:#13733b;--bad:#b3261e;--warn:#8a5a00;--link:#1f5fbf}
*{box-sizing:border-box}
body{margin:0;overflow-wrap:anywhere;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:1100px;margin:0 auto;padding:24px 20px 64px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 10px;padding-bottom:4px;border-bottom:2px solid var(--line)}h3{font-size:16px;margin:18px 0 6px}
a{color:var(--link)}code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
pre{background:var(--soft);padding:10px 12px;border-radius:6px;overflow:auto;max-height:40em;white-space:pre-wrap;word-break:break-word;unicode-bidi:plaintext}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:12px 0}.meta dt{color:var(--muted)}.meta dd{margin:0;word-break:break-all}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:13px;font-weight:600;background:var(--soft)}
.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}.muted{color:var(--muted)}
.state-CONCLUDED{background:#dff3e6;color:var(--ok)}.state-BLOCKED,.state-EXHAUSTED{background:#fde8e6;color:var(--bad)}.state-INVESTIGATING,.state-INTERPRETING{background:#e6eefc;color:var(--link)}
table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%;margin:6px 0}th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top;min-width:6ch}th{background:var(--soft);font-weight:600;white-space:nowrap;overflow-wrap:normal}
td.num{text-align:right;color:var(--muted);user-select:none;white-space:nowrap;min-width:0}td.code{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}td.val{max-width:60ch}
details.long summary{white-space:pre-wrap}details.long .full{max-height:20em;overflow:auto;white-space:pre-wrap;border-top:1px dashed var(--line);margin-top:4px;padding-top:4px}
tr.hit td{background:#fff6d6}
.null{color:var(--muted);font-style:italic}
.timeline{list-style:none;padding:0;margin:0}.timeline li{border-left:3px solid var(--line);padding:4px 0 8px 14px;margin-left:6px}
.timeline li.block{border-color:var(--bad)}.timeline li.turn{border-color:var(--link)}.timeline li.op{border-color:var(--warn)}
.when{color:var(--muted);font-size:12px}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;margin:12px 0;scroll-margin-top:12px}
.card:target{outline:3px solid var(--link)}
.marker{color:var(--warn);font-size:13px;margin:4px 0}
.cc{color:var(--bad);font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
details summary{cursor:pointer;color:var(--muted)}
svg text{font:12px system-ui,sans-serif;fill:var(--muted)}
@media (max-width:600px){main{padding:12px 10px 40px}.meta{grid-template-columns:1fr}.meta dt{margin-top:6px}}
@media print{details{display:block}details>*{display:block}a{color:inherit;text-decoration:none}.card{break-inside:avoid}}
`
