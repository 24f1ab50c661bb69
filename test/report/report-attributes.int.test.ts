/**
 * Text from a case inside an attribute of the report stays inside it: an entity the profile's
 * patterns find in a report whose match holds an invisible character (`\s` matches U+FEFF, so
 * `.quest add<U+FEFF>999` is extracted) has its provenance in a title attribute. That attribute
 * held the marked code's own markup (`<span class="cc" title="…">`), whose quote ended the
 * attribute: the browser made an attribute named `cc"` and showed `">` in the page. Opened in a
 * real Chromium from the file `vba report` writes.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { launchChromium } from '../helpers/browser.js'
import { writeDemoWorld } from '../../src/demo/world.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const test = suite('case text in the attributes of the report')

test('an extracted entity whose match holds U+FEFF: its title shows the code as text, no attribute is broken', async () => {
  const world = await writeDemoWorld(path.join(tempDir('report-attr-world'), 'world'))
  const work = tempDir('report-attr')
  const dir = path.join(work, 'case')
  const report = path.join(work, 'report.md')
  writeFileSync(report, 'Netted wolpertingers vanish after .quest add\uFEFF999 on my character.\n')
  for (const args of [
    ['case', 'init', dir, '--id', 'attr-case'],
    ['case', 'prepare', dir, '--config', world.profile, '--input', report]
  ]) {
    const r = vba(args)
    assert.is(r.code, 0, r.stderr)
  }
  const html = path.join(work, 'report.html')
  const r = vba(['report', dir, '--out', html])
  assert.is(r.code, 0, r.stderr)
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    await page.goto(pathToFileURL(html).href)
    const odd = (await page.evaluate(
      `[...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => !/^[a-z-]+$/.test(a.name)).map((a) => e.tagName + ' ' + a.name))`
    )) as string[]
    assert.equal(odd, [], 'every attribute is one the page wrote')
    const titles = await page.$$eval('#report span.mono[title]', (s) => s.map((x) => x.getAttribute('title')))
    assert.ok(
      titles.includes('quest 999: command ".quest add<U+FEFF>999" at characters 34-48 of the report'),
      JSON.stringify(titles)
    )
    const text = await page.locator('#report').innerText()
    assert.not.match(text, '">', 'no markup shown as text')
    assert.match(text, 'quest 999 (command .quest add<U+FEFF>999')
  } finally {
    await browser.close()
  }
})

test.run()
