import { attempt } from '../../src/failures/error.js'
/** BagIt: the Library of Congress conformance suite, and cases as bags (export, verify, import). */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, statSync, readFileSync, writeFileSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as path from 'node:path'
import tar from 'tar-stream'
import { verifyBagDir } from '../../src/adapters/bagit/verify-bag.js'
import { exportCase } from '../../src/fp.js'
import { importCase, verifyBag } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { appendCommand } from '../../src/adapters/case-store/append.js'
import { openCase } from '../../src/fp.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { canonicalJson } from '../../src/events/canonical.js'
import { sampleCase } from '../helpers/case.js'
import { left, repoRoot, right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'

const SUITE = path.join(repoRoot(), 'test', 'fixtures', 'bagit-conformance-suite')
const bags = (version: string, group: string): string[] => {
  const dir = path.join(SUITE, version, group)
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((d) => statSync(path.join(dir, d)).isDirectory())
        .map((d) => path.join(dir, d))
    : []
}

const conformance = suite('BagIt conformance suite (Library of Congress)')

conformance('accepts every bag under valid/ and warning/, reporting the warnings', async () => {
  let n = 0
  for (const v of ['v1.0', 'v0.97']) {
    for (const dir of bags(v, 'valid')) {
      const r = await verifyBagDir(dir)
      assert.ok(r.valid, `${dir}: ${JSON.stringify(r.findings)}`)
      n++
    }
    for (const dir of bags(v, 'warning')) {
      const r = await verifyBagDir(dir)
      assert.ok(r.valid, `${dir}: ${JSON.stringify(r.findings)}`)
      assert.ok(
        r.findings.some((f) => f.severity === 'warning'),
        `${dir} reports a warning`
      )
      n++
    }
  }
  assert.ok(n >= 19, `bags checked: ${n}`)
})

conformance('rejects every bag under invalid/ and linux-only/ with a coded finding', async () => {
  let n = 0
  for (const v of ['v1.0', 'v0.97']) {
    for (const dir of [...bags(v, 'invalid'), ...bags(v, 'linux-only')]) {
      const r = await verifyBagDir(dir)
      assert.not.ok(r.valid, dir)
      const errors = r.findings.filter((f) => f.severity === 'error')
      assert.ok(
        errors.length > 0 && errors.every((f) => /^[A-Z][A-Z0-9_]+$/.test(f.code)),
        `${dir}: ${JSON.stringify(r.findings)}`
      )
      n++
    }
  }
  assert.ok(n >= 21, `bags checked: ${n}`)
})

conformance.run()

// ---------------------------------------------------------------------------------------------
const transport = suite('cases as bags')

const exported = async (): Promise<{ dir: string; archive: string }> => {
  const h = await sampleCase()
  const archive = path.join(tempDir('bag'), 'case.tar')
  right(await exportCase(h.dir, archive)())
  return { dir: h.dir, archive }
}

transport('export is a valid BagIt 1.0 bag, byte-identical every time; --dir gives the same bag', async () => {
  const { dir, archive } = await exported()
  const again = path.join(tempDir('bag'), 'again.tar')
  right(await exportCase(dir, again)())
  assert.ok(readFileSync(archive).equals(readFileSync(again)), 'deterministic archive')
  const asDir = path.join(tempDir('bagdir'), 'bag')
  right(await exportCase(dir, asDir, { format: 'dir' })())
  const report = await verifyBagDir(asDir)
  assert.ok(report.valid, JSON.stringify(report.findings))
  assert.equal(report.findings, [])
  const info = Object.fromEntries(report.info)
  assert.is(info['External-Identifier'], 'case-sample')
  assert.is(info['VBA-Case-Generation'], '4')
  assert.is(info['VBA-Case-Format-Version'], '1')
  assert.match(info['Payload-Oxum'] ?? '', /^\d+\.4$/)
  for (const f of [
    'bagit.txt',
    'bag-info.txt',
    'manifest-sha256.txt',
    'manifest-sha512.txt',
    'tagmanifest-sha256.txt',
    'tagmanifest-sha512.txt'
  ])
    assert.ok(existsSync(path.join(asDir, f)), f)
  // the system tar agrees: sorted entries, owner 0/0, one root
  const listing = execFileSync('tar', ['tvf', archive], { encoding: 'utf8' }).trim().split('\n')
  const names = listing.map((l) => l.split(/\s+/).pop() ?? '')
  assert.equal(
    names,
    [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  )
  assert.ok(
    listing.every((l) => l.includes(' 0/0 ')),
    'owner 0/0'
  )
  assert.ok(names.every((n) => n.startsWith('case-sample/')))
  // A file to fetch that no payload manifest lists can be neither fetched into a complete bag nor
  // checked (RFC 8493 2.2.3): not a valid bag.
  writeFileSync(path.join(asDir, 'fetch.txt'), 'https://example.org/x 10 data/x\n')
  const fetching = await verifyBagDir(asDir)
  assert.not.ok(fetching.valid)
  assert.equal(
    fetching.findings.filter((f) => f.code === 'FETCH_NOT_IN_MANIFEST').map((f) => f.message),
    ['manifest-sha256.txt', 'manifest-sha512.txt'].map(
      (m) =>
        `fetch.txt names data/x, which ${m} does not list (every file to fetch must be listed in every payload manifest)`
    )
  )
})

transport(
  'round trip: imported elsewhere, replayed with identical projections, no repository or database',
  async () => {
    const { dir, archive } = await exported()
    const target = path.join(tempDir('import'), 'moved')
    const r = right(await importCase(archive, target)())
    assert.is(r.case_id, 'case-sample')
    assert.is(r.generation, 4)
    const a = right(canonicalJson(right(await replayCase(dir, defaultProjections())())))
    const b = right(canonicalJson(right(await replayCase(target, defaultProjections())())))
    assert.is(b, a)
    assert.equal(readdirSync(path.dirname(target)), ['moved'], 'no staging left behind')
  }
)

transport('export takes a consistent view at the generation it started with', async () => {
  const h = await sampleCase()
  const archive = path.join(tempDir('bag'), 'live.tar')
  const exporting = exportCase(h.dir, archive)()
  // a writer appends while the export runs
  const writer = await openCase(h.dir)()
  if (writer._tag === 'Right')
    right(
      await attempt(
        appendCommand(writer.right, {
          commandId: 'during-export',
          expectedGeneration: 4,
          events: [{ type: 'NoteRecorded', actor: 'operator', data: { text: 'late', format: 'plain' } }]
        })
      )
    )
  const r = right(await exporting)
  assert.ok(r.generation === 4 || r.generation === 5)
  const check = right(await verifyBag(archive)())
  assert.ok(check.valid)
  assert.is(check.case?.generation, r.generation)
})

transport(
  'export refuses a case with files that are not its own, naming each: a bag never drops them silently',
  async () => {
    const h = await sampleCase()
    writeFileSync(path.join(h.dir, 'README.txt'), 'my notes')
    mkdirSync(path.join(h.dir, 'objects', 'sha256', 'notes'))
    const out = path.join(tempDir('bag-foreign'), 'case.tar')
    const f = left(await exportCase(h.dir, out)())
    assert.is(f.code, 'CASE_CORRUPT', f.message)
    assert.match(f.message, '2 file(s) in the case directory do not belong to the case package')
    assert.match(f.message, 'README.txt, objects/sha256/notes;')
    assert.equal((f.data as { paths?: string[] }).paths, ['README.txt', 'objects/sha256/notes'])
    const cli = vba(['export', h.dir, out])
    assert.is(cli.code, 1, cli.stderr)
    assert.match(cli.stderr, /^vba: CASE_CORRUPT: 2 file\(s\) .*README\.txt/)
    assert.equal(readdirSync(path.dirname(out)), [], 'nothing written')
    // Leftovers a bag never holds (a lock, a temporary file) are no reason to refuse.
    rmSync(path.join(h.dir, 'README.txt'))
    rmSync(path.join(h.dir, 'objects', 'sha256', 'notes'), { recursive: true })
    writeFileSync(path.join(h.dir, '.vba-tmp-leftover'), 'x')
    writeFileSync(path.join(h.dir, '.vba-lock'), '{}')
    right(await exportCase(h.dir, out)())
    assert.ok(right(await verifyBag(out)()).valid)
  }
)

transport('a bad archive leaves nothing behind; a non-empty target is refused', async () => {
  const { archive } = await exported()
  const parent = tempDir('import-bad')
  const bytes = readFileSync(archive)
  const broken = Buffer.from(bytes)
  broken[Math.floor(bytes.length / 3)] = (broken[Math.floor(bytes.length / 3)] ?? 0) ^ 0x04
  const bad = path.join(tempDir('bad'), 'bad.tar')
  writeFileSync(bad, broken)
  const f = left(await importCase(bad, path.join(parent, 'case'))())
  assert.ok(['BAG_INVALID', 'CASE_CORRUPT', 'ARCHIVE_INVALID', 'ARCHIVE_NOT_CANONICAL'].includes(f.code), f.code)
  assert.equal(readdirSync(parent), [], 'nothing at the destination, no staging left')
  mkdirSync(path.join(parent, 'full'))
  writeFileSync(path.join(parent, 'full', 'x'), 'x')
  assert.is(left(await importCase(archive, path.join(parent, 'full'))()).code, 'CASE_EXISTS')
})

transport(
  'a destination that is a symbolic link, or that another import takes meanwhile, is bad input: never IO_ERROR',
  async () => {
    const { archive } = await exported()
    const parent = tempDir('import-dest')
    mkdirSync(path.join(parent, 'real'))
    symlinkSync('real', path.join(parent, 'link'))
    symlinkSync(path.join(parent, 'nowhere'), path.join(parent, 'dangling'))
    for (const name of ['link', 'dangling']) {
      const f = left(await importCase(archive, path.join(parent, name))())
      assert.is(f.code, 'INVALID_ARGUMENT', f.message)
      assert.match(f.message, `${name} is a symbolic link: give a real directory`)
      for (const args of [
        ['import', archive, path.join(parent, name)],
        ['case', 'init', path.join(parent, name)]
      ]) {
        const r = vba(args)
        assert.is(r.code, 2, r.stderr)
        assert.match(r.stderr, /^vba: INVALID_ARGUMENT: .* is a symbolic link: give a real directory/)
      }
    }
    assert.equal(readdirSync(path.join(parent, 'real')), [], 'nothing written through the link')
    assert.not.ok(existsSync(path.join(parent, 'nowhere')), 'nor where the dangling link points')
    // Another import lands at the destination while this one extracts and verifies: it lost the race.
    const raced = path.join(parent, 'raced')
    const lost = left(
      await importCase(archive, raced, {
        onProgress: () => {
          if (existsSync(raced)) return
          mkdirSync(raced)
          writeFileSync(path.join(raced, 'case.json'), 'the other import')
        }
      })()
    )
    assert.is(lost.code, 'CASE_EXISTS', lost.message)
    assert.match(lost.message, 'was created by someone else meanwhile')
    assert.is(readFileSync(path.join(raced, 'case.json'), 'utf8'), 'the other import')
    assert.equal(readdirSync(parent).sort(), ['dangling', 'link', 'raced', 'real'], 'no staging left')
  }
)

transport('every single-byte change to an exported archive is found by verify or import', async () => {
  const { archive } = await exported()
  const bytes = readFileSync(archive)
  const positions = new Set<number>()
  for (let i = 0; i < 512; i++) positions.add(i) // the first tar header, byte by byte
  for (let i = 0; i < bytes.length; i += 97) positions.add(i) // everything else, spread out
  positions.add(bytes.length - 1)
  const work = tempDir('flips')
  const file = path.join(work, 'flipped.tar')
  let trials = 0
  for (const i of [...positions].sort((a, b) => a - b)) {
    const flipped = Buffer.from(bytes)
    flipped[i] = (flipped[i] ?? 0) ^ (i % 2 === 0 ? 0x01 : 0x80)
    writeFileSync(file, flipped)
    const r = await verifyBag(file)()
    if (r._tag === 'Right' && r.right.valid) assert.unreachable(`flip at byte ${i} went unnoticed`)
    trials++
  }
  assert.ok(trials > 600, `trials: ${trials}`)
})

/** A tar with the given entries (for hostile archives). */
const hostileTar = async (
  entries: Array<{
    name: string
    type?: 'file' | 'symlink' | 'link' | 'character-device' | 'directory'
    body?: string
    linkname?: string
  }>
): Promise<string> => {
  const pack = tar.pack()
  for (const e of entries) {
    await new Promise<void>((resolve, reject) =>
      pack.entry(
        { name: e.name, type: e.type ?? 'file', ...(e.linkname === undefined ? {} : { linkname: e.linkname }) },
        e.body ?? '',
        (err) => (err ? reject(err) : resolve())
      )
    )
  }
  pack.finalize()
  const chunks: Buffer[] = []
  for await (const c of pack) chunks.push(c as Buffer)
  const file = path.join(tempDir('hostile'), 'h.tar')
  writeFileSync(file, Buffer.concat(chunks))
  return file
}

transport(
  'hostile archives are refused before anything lands: escapes, absolute paths, links, devices, duplicates',
  async () => {
    const cases: Array<[Parameters<typeof hostileTar>[0], string]> = [
      [[{ name: 'bag/bagit.txt' }, { name: '../../evil.txt' }], 'ARCHIVE_ENTRY_UNSAFE'],
      [[{ name: 'bag/bagit.txt' }, { name: 'bag/data/../../evil.txt' }], 'ARCHIVE_ENTRY_UNSAFE'],
      [[{ name: '/etc/evil' }], 'ARCHIVE_ENTRY_UNSAFE'],
      [[{ name: 'bag/bagit.txt' }, { name: 'other/bagit.txt' }], 'ARCHIVE_ENTRY_UNSAFE'],
      [
        [{ name: 'bag/bagit.txt' }, { name: 'bag/data/link', type: 'symlink', linkname: '/etc/passwd' }],
        'ARCHIVE_ENTRY_TYPE'
      ],
      [
        [{ name: 'bag/bagit.txt' }, { name: 'bag/data/hard', type: 'link', linkname: 'bag/bagit.txt' }],
        'ARCHIVE_ENTRY_TYPE'
      ],
      [[{ name: 'bag/bagit.txt' }, { name: 'bag/data/dev', type: 'character-device' }], 'ARCHIVE_ENTRY_TYPE'],
      [[{ name: 'bag/bagit.txt' }, { name: 'bag/bagit.txt' }], 'ARCHIVE_DUPLICATE_ENTRY'],
      [[{ name: 'bag/data/a\\..\\..\\x' }], 'ARCHIVE_ENTRY_UNSAFE']
    ]
    for (const [entries, code] of cases) {
      const archive = await hostileTar(entries)
      const parent = tempDir('hostile-dest')
      const f = left(await importCase(archive, path.join(parent, 'case'))())
      assert.is(f.code, code, JSON.stringify(entries))
      assert.equal(readdirSync(parent), [], 'nothing left behind')
    }
    assert.not.ok(existsSync(path.join(tempDir('x'), '..', '..', 'evil.txt')))
    // a bag directory with a symlink in its payload is invalid too
    const { dir } = await exported()
    const asDir = path.join(tempDir('linkbag'), 'bag')
    right(await exportCase(dir, asDir, { format: 'dir' })())
    symlinkSync('/etc/passwd', path.join(asDir, 'data', 'passwd'))
    assert.ok((await verifyBagDir(asDir)).findings.some((f) => f.code === 'SPECIAL_FILE'))
  }
)

/** bag-info.txt rewritten by `edit`, with tag manifests that agree (what a forger would do). */
const retag = (bag: string, edit: (info: string) => string): void => {
  writeFileSync(path.join(bag, 'bag-info.txt'), edit(readFileSync(path.join(bag, 'bag-info.txt'), 'utf8')))
  for (const alg of ['sha256', 'sha512']) {
    const file = path.join(bag, `tagmanifest-${alg}.txt`)
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => {
        const name = l.slice(l.indexOf('  ') + 2)
        return `${createHash(alg)
          .update(readFileSync(path.join(bag, name)))
          .digest('hex')}  ${name}`
      })
    writeFileSync(file, `${lines.join('\n')}\n`)
  }
}

transport(
  'bag-info.txt that names another generation, head or case than data/ holds is BAG_INFO_MISMATCH; a bag without the labels is warned about',
  async () => {
    const h = await sampleCase()
    const older = path.join(tempDir('bag-info'), 'older')
    right(await exportCase(h.dir, older, { format: 'dir' })())
    const olderInfo = readFileSync(path.join(older, 'bag-info.txt'), 'utf8')
    const writer = right(await openCase(h.dir)())
    right(
      await attempt(
        appendCommand(writer, {
          commandId: 'after-export',
          expectedGeneration: 4,
          events: [{ type: 'NoteRecorded', actor: 'operator', data: { text: 'later', format: 'plain' } }]
        })
      )
    )
    const bag = path.join(tempDir('bag-info'), 'newer')
    right(await exportCase(h.dir, bag, { format: 'dir' })())
    assert.ok(right(await verifyBag(bag)()).valid, 'the honest bag verifies')
    const newerInfo = readFileSync(path.join(bag, 'bag-info.txt'), 'utf8')
    // The newer bag claims the older generation and head (its tag manifests made to agree).
    const label = (text: string, name: string): string => text.split('\n').find((l) => l.startsWith(`${name}: `)) ?? ''
    retag(bag, (info) =>
      info
        .replace(label(info, 'VBA-Case-Generation'), label(olderInfo, 'VBA-Case-Generation'))
        .replace(label(info, 'VBA-Case-Head'), label(olderInfo, 'VBA-Case-Head'))
    )
    assert.ok((await verifyBagDir(bag)).valid, 'as a bag alone it is intact')
    const check = right(await verifyBag(bag)())
    assert.is(check.valid, false)
    assert.equal(
      check.bag.findings.filter((f) => f.severity === 'error').map((f) => f.code),
      ['BAG_INFO_MISMATCH', 'BAG_INFO_MISMATCH']
    )
    assert.match(check.bag.findings[0]?.message ?? '', 'VBA-Case-Generation: 4, the case in data/ holds 5')
    const cli = vba(['verify', bag])
    assert.is(cli.code, 1, cli.stdout)
    assert.match(cli.stdout, 'BAG_INFO_MISMATCH')
    // Another case's identifier.
    retag(bag, () => newerInfo.replace('External-Identifier: case-sample', 'External-Identifier: case-other'))
    const other = right(await verifyBag(bag)())
    assert.equal(
      other.bag.findings.filter((f) => f.severity === 'error').map((f) => f.message),
      ['bag-info.txt says External-Identifier: case-other, the case in data/ holds case-sample']
    )
    // Without the case labels (a bag made by another tool): valid, with warnings.
    retag(bag, (info) =>
      info
        .split('\n')
        .filter((l) => !/^(External-Identifier|VBA-Case-Generation|VBA-Case-Head):/.test(l))
        .join('\n')
    )
    const bare = right(await verifyBag(bag)())
    assert.ok(bare.valid, JSON.stringify(bare.bag.findings))
    assert.equal(
      bare.bag.findings.map((f) => `${f.severity}:${f.code}`),
      [
        'warning:BAG_INFO_CASE_LABEL_MISSING',
        'warning:BAG_INFO_CASE_LABEL_MISSING',
        'warning:BAG_INFO_CASE_LABEL_MISSING'
      ]
    )
  }
)

transport('the CLI: export, verify a tar, a bag directory and a case, import', async () => {
  const h = await sampleCase()
  const out = path.join(tempDir('cli'), 'c.tar')
  const e = vba(['export', h.dir, out])
  assert.is(e.code, 0, e.stderr)
  assert.match(e.stdout, 'exported case case-sample at generation 4')
  assert.is(vba(['export', h.dir, out]).code, 2, 'an existing output is refused')
  const v = vba(['verify', out])
  assert.is(v.code, 0, v.stdout)
  assert.match(v.stdout, 'bag: BagIt 1.0')
  const d = path.join(tempDir('cli'), 'bagdir')
  assert.is(vba(['export', h.dir, d, '--dir']).code, 0)
  assert.is(vba(['verify', d]).code, 0)
  const target = path.join(tempDir('cli'), 'imported')
  const i = vba(['import', out, target])
  assert.is(i.code, 0, i.stderr)
  assert.is(vba(['verify', target]).code, 0)
  const bad = vba(['verify', path.join(SUITE, 'v0.97', 'invalid', 'corrupt-data-file')])
  assert.is(bad.code, 1)
  assert.match(bad.stdout, 'CHECKSUM_MISMATCH')
})

transport.run()
