/**
 * The API reference in docs/api is generated from the TSDoc comments (TypeDoc, Markdown): a test
 * regenerates it and compares byte for byte, so the reference cannot drift from the code
 * (`npm run api-docs` rewrites it). Also: every root export is documented.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { repoRoot, tempDir } from '../helpers/fs.js'

const root = repoRoot()
const list = (dir: string, rel = ''): string[] =>
  readdirSync(path.join(dir, rel)).flatMap((n) => {
    const r = rel === '' ? n : `${rel}/${n}`
    return statSync(path.join(dir, r)).isDirectory() ? list(dir, r) : [r]
  })

const api = suite('docs/api')

api('is exactly what TypeDoc generates from the code today', () => {
  const out = path.join(tempDir('api-docs'), 'api')
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out], {
    cwd: root,
    encoding: 'utf8'
  })
  assert.is(r.status, 0, r.stdout + r.stderr)
  assert.not.match(r.stdout, '[warning]', r.stdout)
  const committed = list(path.join(root, 'docs', 'api')).sort()
  assert.equal(list(out).sort(), committed, 'the same files (run npm run api-docs)')
  for (const f of committed)
    assert.ok(
      readFileSync(path.join(out, f)).equals(readFileSync(path.join(root, 'docs', 'api', f))),
      `${f} differs: run npm run api-docs`
    )
})

api(
  'groups every entry by namespace: each public name has its @category; only re-exports are left to References',
  () => {
    const entries = ['README.md', 'fp/README.md', 'testing/README.md'].map((f) =>
      readFileSync(path.join(root, 'docs', 'api', 'vba-case-research', f), 'utf8')
    )
    const headings = (text: string): string[] => [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1] ?? '')
    assert.equal(
      headings(entries[0] ?? '').slice(0, 6),
      ['Client', 'cases', 'research', 'investigations', 'transport', 'queue'],
      'the root entry reads in the order of the client: openVba, then its namespaces'
    )
    for (const text of entries) {
      const rest = text.split(/^## References$/m)[1]
      if (rest === undefined) continue
      const items = rest.split(/^### /m).slice(1)
      assert.ok(items.length > 0)
      assert.equal(
        items.filter((item) => !/^\S+\n\nRe-exports \[/.test(item)),
        [],
        'a name without @category (it would be listed under References)'
      )
    }
  }
)

api('documents every function, class and interface the root entry exports', () => {
  const dir = path.join(root, 'docs', 'api', 'vba-case-research')
  const pages = list(dir).filter((f) => /^(functions|classes|interfaces)\//.test(f))
  assert.ok(pages.length >= 20, `${pages.length} pages`)
  const undocumented = pages.filter((f) => {
    const text = readFileSync(path.join(dir, f), 'utf8')
    const body = text.split('\n').slice(6).join('\n')
    // a documented symbol has prose between its heading and its first section
    return !/^# .*\n\n(> .*\n\n)?[A-Z`*[]/m.test(body)
  })
  assert.equal(undocumented, [])
})

api('shows the members of every anonymous object type: a parameter or option is never just `object`', () => {
  const dir = path.join(root, 'docs', 'api', 'vba-case-research')
  const collapsed = list(dir).filter((f) =>
    /`object` &|& `object`|`object`\[\]/.test(readFileSync(path.join(dir, f), 'utf8'))
  )
  assert.equal(
    collapsed,
    [],
    'an intersection or array of an object type shown as `object` (typedoc.json: expandObjects)'
  )
  const page = (f: string) => readFileSync(path.join(dir, 'interfaces', f), 'utf8')
  // what a controller passes: an attachment's bytes, a note's text, a bag's receipt, an import's strict
  assert.match(page('CasesApi.md'), '`bytes`: `Uint8Array`')
  assert.match(page('CasesApi.md'), '`text`: `string`')
  assert.match(page('TransportApi.md'), '`expectHead?`')
  assert.match(page('TransportApi.md'), '`strict?`: `boolean`')
})

api.run()
