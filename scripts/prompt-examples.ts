/**
 * Writes real prompts of the scripted investigation (scripts/lib/scripted-investigation.ts, on a
 * fresh demo world) into docs/usage.md, between `<!-- prompt turn N -->` and `<!-- /prompt -->`
 * (npm run prompt-examples). A test regenerates them and fails when the docs differ.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { writeDemoWorld } from '../src/demo/world.js'
import { runScriptedInvestigation } from './lib/scripted-investigation.js'
import { repoRoot } from '../test/helpers/fs.js'

/** The prompts of the scripted investigation, turn by turn. */
export const examplePrompts = async (): Promise<readonly string[]> => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vba-prompts-'))
  try {
    const world = await writeDemoWorld(path.join(root, 'world'))
    return (await runScriptedInvestigation(world.profile, path.join(root, 'case'))).prompts
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const BLOCK = /<!-- prompt turn (\d+) -->\n[\s\S]*?<!-- \/prompt -->/g

/** `markdown` with every prompt block replaced by the prompt of its turn (as a text block with its size). */
export const withPrompts = (markdown: string, prompts: readonly string[]): string =>
  markdown.replace(BLOCK, (_, turn: string) => {
    const p = prompts[Number(turn) - 1]
    if (p === undefined) throw new Error(`no prompt for turn ${turn}`)
    return `<!-- prompt turn ${turn} -->\n${p.length} characters:\n\n\`\`\`text\n${p}\n\`\`\`\n<!-- /prompt -->`
  })

export const USAGE = (): string => path.join(repoRoot(), 'docs', 'usage.md')

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))
if (isMain) {
  const prompts = await examplePrompts()
  writeFileSync(USAGE(), withPrompts(readFileSync(USAGE(), 'utf8'), prompts))
  process.stdout.write(
    `wrote the prompts of turns ${[...readFileSync(USAGE(), 'utf8').matchAll(/<!-- prompt turn (\d+) -->/g)].map((m) => m[1]).join(', ')} into docs/usage.md\n`
  )
}
