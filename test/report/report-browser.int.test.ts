/**
 * The case report in a real browser: Debian's chromium driven by playwright-core, with every
 * network request blocked and recorded. The concluded demo investigation and a case holding a
 * capture of every kind (on the demo world, with a hostile row: `<script>`, `</table>`, RTL and
 * zero-width characters) are rendered by `vba report` and opened from files; the tests assert
 * what a reviewer sees, that every evidence link lands on its capture, and that nothing runs or
 * leaves the page. Screenshots at 1280 and 390 pixels wide are kept in test-artifacts/.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from '../helpers/browser.js'
import { initCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { writeDemoWorld } from '../../src/demo/world.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { queryInCase } from '../../src/fp.js'
import { recordNote } from '../../src/fp.js'
import { writeInvestigation } from '../helpers/investigation.js'
import { startServe, vba } from '../helpers/cli.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'

const ARTIFACTS = path.join(repoRoot(), 'test-artifacts', 'report')
mkdirSync(ARTIFACTS, { recursive: true })

const HOSTILE = '<script>document.title="owned"</script></table></td>\u202Eevil\u200Bhidden'

// The concluded investigation (database research).
const invDir = path.join(tempDir('report-inv'), 'case')
await writeInvestigation(invDir, tempDir('report-inv-world'))
// A case with a capture of every kind, on the demo world with a hostile row.
const world = await writeDemoWorld(path.join(tempDir('report-world'), 'world'))
const db = new Database(path.join(world.dir, 'world.sqlite'))
db.prepare('UPDATE creature_template SET name = ? WHERE entry = 23487').run(HOSTILE)
db.close()
const research = createProjectResearch(right(await loadProfile(world.profile)()), { openSource: openSourceResearch })
const kindsDir = path.join(tempDir('report-kinds'), 'case')
right(
  await initCase({ dir: kindsDir, caseId: 'case-kinds', title: 'every capture kind </title><script>x()</script>' })()
)
const QUERIES: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['source.files', { kind: 'source.files', text: 'brewfest' }],
  ['source.search', { kind: 'source.search', text: 'AddSC_' }],
  ['source.symbol', { kind: 'source.symbol', symbol: 'AddSC_boss_garr' }],
  ['source.registration', { kind: 'source.registration', symbol: 'boss_garr' }],
  ['source.schema', { kind: 'source.schema', text: 'creature_template' }],
  [
    'source.read',
    {
      kind: 'source.read',
      path: 'src/server/scripts/EasternKingdoms/MoltenCore/boss_garr.cpp',
      start_line: 1,
      end_line: 12
    }
  ],
  ['source.context', { kind: 'source.context', text: '23487', path_prefix: 'src/server/' }],
  ['database.tables', { kind: 'database.tables' }],
  ['database.schema', { kind: 'database.schema', table: 'creature_template' }],
  [
    'database.rows',
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry', 'name', 'subname'],
      filters: [{ column: 'entry', operator: 'eq', value: 23487 }],
      offset: 0,
      limit: 5
    }
  ],
  ['database.count', { kind: 'database.count', table: 'creature_template', filters: [] }]
]
for (const [kind, q] of QUERIES) {
  const r = await queryInCase(kindsDir, research, q, `q-${kind.replace('.', '-')}`)()
  if (r._tag === 'Left') throw new Error(`${kind}: ${JSON.stringify(r.left)}`)
}
right(await recordNote(kindsDir, { text: `An operator pasted this: ${HOSTILE} (see E10)` })())
await research.close()

// Point 9 of issue 23: every invisible kind in a note and the title, a 2,000-character and a 5 MB value in a rows table.
const INVISIBLES = [
  '\u00ad',
  '\u034f',
  '\u180e',
  '\u17b4',
  '\u206a',
  '\u206f',
  '\ufe0f',
  '\u{e0041}',
  '\u001b',
  '\u0007',
  '\u0008',
  '\u202e',
  '\u2066',
  '\u200d'
]
const longWorld = await writeDemoWorld(path.join(tempDir('report-long-world'), 'world'))
const longDb = new Database(path.join(longWorld.dir, 'world.sqlite'))
longDb.prepare('UPDATE creature_template SET subname = ? WHERE entry = 24766').run('long value '.repeat(182))
longDb.prepare('UPDATE creature_template SET subname = ? WHERE entry = 24767').run('five megabytes '.repeat(350_000))
longDb.close()
const longProfile = right(await loadProfile(longWorld.profile)())
const longResearch = createProjectResearch(
  { ...longProfile, limits: { ...longProfile.limits, max_result_bytes: 16 << 20 } },
  { openSource: openSourceResearch }
)
const longDir = path.join(tempDir('report-long'), 'case')
right(await initCase({ dir: longDir, caseId: 'case-long', title: `invisible \u202Etitle\u200B ${'\u001b'}[2J` })())
const longRows = await queryInCase(
  longDir,
  longResearch,
  {
    kind: 'database.rows',
    table: 'creature_template',
    columns: ['entry', 'subname', 'minlevel', 'faction'],
    filters: [{ column: 'entry', operator: 'in', value: [24766, 24767] }],
    offset: 0,
    limit: 5
  },
  'q-long'
)()
if (longRows._tag === 'Left') throw new Error(JSON.stringify(longRows.left))
right(await recordNote(longDir, { text: `invisibles: ${INVISIBLES.map((c, i) => `${i}[${c}]`).join(' ')}` })())
await longResearch.close()

const render = (dir: string, name: string): string => {
  const out = path.join(tempDir('report-out'), name)
  const r = vba(['report', dir, '--out', out])
  assert.is(r.code, 0, r.stderr)
  return out
}
const invHtml = render(invDir, 'investigation.html')
const kindsHtml = render(kindsDir, 'kinds.html')
const longHtml = render(longDir, 'long.html')

const browser: Browser = await launchChromium()

/** Opens a report with the network blocked; collects every request besides the file and every console error. */
const open = async (file: string, width: number): Promise<{ page: Page; requests: string[]; errors: string[] }> => {
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  const requests: string[] = []
  const errors: string[] = []
  const own = pathToFileURL(file).href
  await context.route('**/*', async (route) => {
    const url = route.request().url()
    if (url === own) await route.continue()
    else {
      requests.push(url)
      await route.abort()
    }
  })
  const page = await context.newPage()
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(own)
  return { page, requests, errors }
}

const test = suite('the case report in chromium')

test('the demo investigation: conclusion, verification and HEAD are visible; under 2 MB; byte-identical when rendered again', async () => {
  assert.ok(statSync(invHtml).size < 2 * 1024 * 1024)
  assert.ok(
    readFileSync(render(invDir, 'again.html')).equals(readFileSync(invHtml)),
    'the same case gives the same bytes'
  )
  const { page, requests, errors } = await open(invHtml, 1280)
  assert.match(await page.locator('#conclusion').innerText(), 'The SmartAI despawn on spell hit races the item reward')
  assert.match(await page.locator('#state').innerText(), 'CONCLUDED')
  assert.match(await page.locator('#verification').innerText(), 'verified: chain and rules hold')
  assert.match(await page.locator('#evidence-check').innerText(), 'evidence not re-derived')
  const head = right(await (await import('../../src/fp.js')).openCase(invDir)())
  assert.match(await page.locator('header').innerText(), `${head.cursor.seq}:${head.cursor.hash}`)
  assert.match(await page.locator('header').innerText(), 'demo-world-fixture')
  assert.match(await page.locator('#timeline').innerText(), 'turn 1')
  assert.ok(await page.locator('#budget svg').isVisible())
  await page.screenshot({ path: path.join(ARTIFACTS, 'investigation-1280.png'), fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.screenshot({ path: path.join(ARTIFACTS, 'investigation-390.png'), fullPage: true })
  const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number
  assert.ok(overflow <= 1, `no horizontal page scroll at 390 px (overflow ${overflow} px)`)
  assert.equal(requests, [])
  assert.equal(errors, [])
  await page.context().close()
})

test('every evidence and hypothesis link lands on its target', async () => {
  for (const file of [invHtml, kindsHtml]) {
    const { page, requests, errors } = await open(file, 1280)
    const hrefs = await page.$$eval('a[href^="#"]', (as) => [...new Set(as.map((a) => a.getAttribute('href') ?? ''))])
    assert.ok(hrefs.length >= 3, `${path.basename(file)} has links (${hrefs.join(' ')})`)
    for (const href of hrefs) {
      await page.locator(`a[href="${href}"]`).first().click()
      assert.is(await page.evaluate('location.hash'), href)
      const target = page.locator(href)
      assert.is(await target.count(), 1, `${href} has exactly one target`)
      assert.ok(await target.isVisible())
      const box = await target.boundingBox()
      assert.ok(box !== null && box.y >= -1 && box.y < 900, `${href} is scrolled into view (y ${box?.y})`)
    }
    assert.equal(requests, [])
    assert.equal(errors, [])
    await page.context().close()
  }
})

test('a capture of every kind is rendered for people, and hostile text stays text', async () => {
  const { page, requests, errors } = await open(kindsHtml, 1280)
  const evidence = await page.locator('#evidence').innerText()
  for (const [kind] of QUERIES) assert.match(evidence, kind)
  // Source lines with numbers, path and blob; rows as a table with NULL shown as NULL.
  assert.match(evidence, 'src/server/scripts/EasternKingdoms/MoltenCore/boss_garr.cpp')
  assert.match(evidence, /blob [0-9a-f]{40}/)
  assert.ok((await page.locator('#evidence table.src td.num').count()) > 5)
  assert.match(evidence, 'NULL')
  // Hostile text: no script element, the title untouched, the text shown literally with the invisible characters as codes.
  assert.is(await page.evaluate('document.scripts.length'), 0)
  assert.is(await page.title(), 'case-kinds: every capture kind </title><script>x()</script>')
  assert.match(evidence, '<script>document.title="owned"</script></table></td>')
  assert.match(evidence, '<U+202E>evil<U+200B>hidden')
  assert.match(await page.locator('#timeline').innerText(), 'An operator pasted this: <script>')
  await page.screenshot({ path: path.join(ARTIFACTS, 'kinds-1280.png'), fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.screenshot({ path: path.join(ARTIFACTS, 'kinds-390.png'), fullPage: true })
  assert.equal(requests, [])
  assert.equal(errors, [])
  await page.context().close()
})

test('every invisible character shows as a code; plain text in the title; long values fold into bounded cells (issue 23, point 9)', async () => {
  const { page, requests, errors } = await open(longHtml, 1280)
  const timeline = await page.locator('#timeline').innerText()
  for (const [i, c] of INVISIBLES.entries()) {
    const label = `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
    assert.ok(timeline.includes(`${i}[<${label}>]`), `${label} is shown as a code`)
  }
  // The title holds plain text: the code as text, no markup.
  const title = await page.title()
  assert.is(title, 'case-long: invisible <U+202E>title<U+200B> <U+001B>[2J')
  assert.not.match(readFileSync(longHtml, 'utf8').split('<title>')[1]?.split('</title>')[0] ?? '', '<span')
  // The rows table: headers keep their words on one line; the card stays short; long values fold.
  const heights = await page.$$eval('#evidence th', (ths) => ths.map((th) => th.getBoundingClientRect().height))
  assert.ok(heights.length === 4 && heights.every((h) => h < 60), `header heights ${heights.join(', ')}`)
  const card = await page.locator('#evidence .card').first().boundingBox()
  assert.ok(card !== null && card.height < 1500, `the card is ${card?.height} px high`)
  const folded = page.locator('#evidence details.long')
  assert.is(await folded.count(), 2, 'both long values fold')
  await folded.nth(1).locator('summary').click()
  const full = await folded.nth(1).locator('.full').boundingBox()
  assert.ok(full !== null && full.height <= 420, `the expanded value is a box of bounded height (${full?.height} px)`)
  assert.match(await folded.nth(1).locator('summary').innerText(), '(5250000 characters)')
  await page.screenshot({ path: path.join(ARTIFACTS, 'long-1280.png') })
  assert.equal(requests, [])
  assert.equal(errors, [])
  await page.context().close()
})

test('vba serve: a read-only listing of a folder of cases, each linking to its report; nothing else is served', async () => {
  const root = tempDir('serve-root')
  cpSync(invDir, path.join(root, 'investigation'), { recursive: true })
  cpSync(kindsDir, path.join(root, 'kinds'), { recursive: true })
  const { child, base } = await startServe([root])
  try {
    assert.is((await fetch(base, { method: 'POST' })).status, 405)
    assert.is((await fetch(`${base}case/..%2F..%2Fetc%2Fpasswd`)).status, 404)
    assert.is((await fetch(`${base}case-investigation`)).status, 404)
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const outside: string[] = []
    const errors: string[] = []
    await context.route('**/*', async (route) => {
      if (route.request().url().startsWith(base)) await route.continue()
      else {
        outside.push(route.request().url())
        await route.abort()
      }
    })
    const page = await context.newPage()
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    await page.goto(base)
    const listing = await page.locator('table').innerText()
    assert.match(listing, 'case-investigation')
    assert.match(listing, 'CONCLUDED')
    assert.match(listing, 'case-kinds')
    await page.screenshot({ path: path.join(ARTIFACTS, 'serve-1280.png'), fullPage: true })
    await page.click('a[href="/case/investigation"]')
    assert.match(
      await page.locator('#conclusion').innerText(),
      'The SmartAI despawn on spell hit races the item reward'
    )
    assert.equal(outside, [])
    assert.equal(errors, [])
    await context.close()
  } finally {
    child.kill('SIGTERM')
  }
})

test.after(async () => {
  await browser.close()
})
test.run()
