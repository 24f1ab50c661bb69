/**
 * What an agent reads of its case over MCP, without spending budget. The prompt `investigate`: the
 * text a model in the loop is handed for the case's next turn (the loop's renderer on the case's
 * current state: contract, report, facts, evidence), after a few lines on how its answers map to
 * the tools. Resources: every piece of evidence (`vba://evidence/E3`: compact text and canonical
 * capture), the contract (`vba://case/contract`: the prompt's stable part) and the report
 * (`vba://case/report`: the Markdown summary and the HTML report, each with its verification).
 * A case that has not started is started by `investigate` (the agent begins the investigation),
 * never by connecting. The prompt and the contract are sent as the case records them (the prompt's
 * bytes are what `vba verify` checks); every other text shows its invisible characters as codes
 * (agent-text.ts), the canonical capture as JSON escapes, so that it parses to the recorded value.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CAPTURE_MEDIA_TYPE } from '../commands/case-query.js'
import { openAt } from '../commands/run.js'
import { promptInputs } from '../investigation/prompt-inputs.js'
import { renderPrompt, stablePart } from '../projections/prompt.js'
import { caseReportWithVerification, caseSummaryMarkdown } from '../report/case-report.js'
import type { McpSdk } from './server.js'
import type { McpSession } from './session.js'
import { agentText, agentValue } from './agent-text.js'
import { showInvisibleJson } from '../projections/visible-text.js'

const EVIDENCE_URI = /^vba:\/\/evidence\/(E[1-9][0-9]{0,8})$/
const CONTRACT_URI = 'vba://case/contract'
const REPORT_URI = 'vba://case/report'

/** How the loop's answer contract maps to the tools (said before the loop's prompt). */
const toolNote = (caseId: string): string =>
  [
    `You investigate case ${caseId} through the tools of this MCP server. Below is the prompt a model in the investigation loop is handed for the next turn.`,
    'Where it asks for a JSON answer, call a tool instead: {"interpretation": …} is interpretation_record; {"next": {"kind": "tool", "operation": "project.query", …}} is the research tool of that kind (source_read for source.read, …); a hypothesis is hypothesis_propose or hypothesis_update; a lab test is lab_test_request; the conclusion is conclude.',
    'Every decision is recorded as a turn of the case with your client name; case_status and the vba://evidence/<id> resources read what is recorded at no cost.',
    ''
  ].join('\n')

const rpcError = (code: number, message: string): Error => Object.assign(new Error(message), { code })

/** What resources/read answers for `uri`: the contract, the report or one piece of evidence. */
const readResource = async (session: McpSession, uri: string, internal: (e: unknown) => never) => {
  if (uri === CONTRACT_URI) {
    const s = (await openAt(session.at).catch(internal)).cursor.state
    // The stable part of the recorded prompt, as it is recorded (as the prompt investigate).
    const text =
      s.settings === null
        ? `case ${session.caseId} has not started: its contract is set by the first call that records something (or the prompt investigate)`
        : stablePart(s)
    return { contents: [{ uri, mimeType: 'text/plain', text }] }
  }
  if (uri === REPORT_URI) {
    const [md, html] = await Promise.all([
      caseSummaryMarkdown(session.at).catch(internal),
      caseReportWithVerification(session.at).catch(internal)
    ])
    return {
      contents: [
        { uri, mimeType: 'text/markdown', text: agentText(md.markdown) },
        { uri, mimeType: 'text/html', text: agentText(html.html) }
      ]
    }
  }
  const id = EVIDENCE_URI.exec(uri)?.[1]
  const found = id === undefined ? null : await session.readEvidence(id).catch(internal)
  // -32002: the MCP code for a resource that does not exist.
  if (found === null)
    throw Object.assign(
      rpcError(
        -32002,
        `EVIDENCE_UNKNOWN: case ${session.caseId} has no resource ${JSON.stringify(uri.slice(0, 120))} (case_status lists the evidence; ${CONTRACT_URI} and ${REPORT_URI} are the contract and the report)`
      ),
      { data: { uri: uri.slice(0, 120) } }
    )
  return {
    contents: [
      { uri, mimeType: 'text/plain', text: agentText(found.text) },
      { uri, mimeType: CAPTURE_MEDIA_TYPE, text: showInvisibleJson(found.json) }
    ]
  }
}

/** Registers the prompt and the resources of `session` on `server`. */
export const caseResources = (
  sdk: McpSdk,
  server: Server,
  session: McpSession,
  internal: (e: unknown) => never
): void => {
  const t = sdk.types
  server.setRequestHandler(t.ListPromptsRequestSchema, () => ({
    prompts: [
      {
        name: 'investigate',
        title: 'investigate the case',
        description: `case ${session.caseId} as a model in the investigation loop sees it for its next turn: the contract, the bug report, the facts and the evidence (starts the investigation if it has not started)`
      }
    ]
  }))
  server.setRequestHandler(t.GetPromptRequestSchema, async (request) => {
    if (request.params.name !== 'investigate')
      throw rpcError(
        -32602,
        `PROMPT_UNKNOWN: unknown prompt ${JSON.stringify(request.params.name.slice(0, 80))}; the prompt is investigate`
      )
    await session.start().catch(internal)
    const handle = await openAt(session.at).catch(internal)
    const s = handle.cursor.state
    const prompt = renderPrompt(s, await promptInputs(handle, s).catch(internal))
    // The prompt the next turn records (ModelRequested), byte for byte: not made visible here.
    return {
      description: `case ${session.caseId}: ${s.state}, turn ${s.turn + 1} (prompt ${prompt.version})`,
      messages: [
        { role: 'user' as const, content: { type: 'text' as const, text: toolNote(session.caseId) + prompt.text } }
      ]
    }
  })
  server.setRequestHandler(t.ListResourcesRequestSchema, async () => ({
    resources: agentValue([
      {
        uri: CONTRACT_URI,
        name: 'contract',
        title: `the contract of case ${session.caseId}`,
        description:
          'what the investigation may ask and decide, its budget and settings (the stable part of the prompt)',
        mimeType: 'text/plain'
      },
      {
        uri: REPORT_URI,
        name: 'report',
        title: `the report of case ${session.caseId}`,
        description: 'the case as Markdown (conclusion, hypotheses, cited evidence, verification) and the HTML report',
        mimeType: 'text/markdown'
      },
      ...(await session.evidence().catch(internal)).map((e) => ({
        uri: e.uri,
        name: e.id,
        title: `${e.id}: ${e.request}`,
        description: `evidence ${e.id} of case ${session.caseId}: ${e.request}`,
        mimeType: 'text/plain'
      }))
    ])
  }))
  server.setRequestHandler(t.ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'vba://evidence/{id}',
        name: 'evidence',
        title: 'recorded evidence',
        description: `one piece of evidence of case ${session.caseId} by its id (E1, E2, …): the compact text and the canonical capture`,
        mimeType: 'text/plain'
      }
    ]
  }))
  server.setRequestHandler(t.ReadResourceRequestSchema, (request) =>
    readResource(session, request.params.uri, internal)
  )
}
