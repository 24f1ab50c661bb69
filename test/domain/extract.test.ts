import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { parse } from 'smol-toml'
import { decodeEnrichment } from '../../src/domain/enrichment-config.js'
import { extractEntities, provenanceText, untypedNumbers, type ExtractPattern } from '../../src/domain/extract.js'
import { left, repoRoot, right } from '../helpers/fs.js'

const adapter = parse(readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')) as {
  enrichment: unknown
}
const patterns = right(decodeEnrichment(adapter.enrichment)).extract ?? []
const found = (report: string, listed: Array<{ type: string; id: number | string }> = []) =>
  extractEntities(report, patterns, listed).map((x) => `${x.type} ${x.id} ${x.kind} ${JSON.stringify(x.text)}`)

const extract = suite('entities from the report')

extract('the TrinityCore profile finds database-site links, GM commands and labels, with their spans', () => {
  const report = [
    '**Description:** Drakuru does not give the credit for [Betrayal](https://www.wowhead.com/wotlk/quest=12713/betrayal).',
    'Quest ID: 12713',
    '**Steps to reproduce:**',
    '1. `.quest add 12713`',
    '2. `.go c 119367` and talk to [Overlord Drakuru](https://wotlk.evowow.com/?npc=28503)',
    '3. `.additem 38699` then `.cast 52307`; `.learn 52308`',
    '4. `.go o 57112`, `.npc add 28503`, `.q a 10911`',
    'Drop from https://wotlkdb.com/?item=39319 and https://wotlkdb.com/?object=190777 (NPC 28518).'
  ].join('\n')
  const got = extractEntities(report, patterns)
  assert.equal(
    got.map((x) => `${x.type} ${x.id} ${x.kind} ${JSON.stringify(x.text)}`),
    [
      'quest 12713 link "quest=12713"',
      'creature_spawn 119367 command ".go c 119367"',
      'creature 28503 link "npc=28503"',
      'item 38699 command ".additem 38699"',
      'spell 52307 command ".cast 52307"',
      'spell 52308 command ".learn 52308"',
      'gameobject_spawn 57112 command ".go o 57112"',
      'quest 10911 command ".q a 10911"',
      'item 39319 link "item=39319"',
      'gameobject 190777 link "object=190777"',
      'creature 28518 label "NPC 28518"'
    ]
  )
  // every span is the text it names, and the first mention is the one kept
  for (const x of got) assert.is(report.slice(x.span.start, x.span.end), x.text)
  assert.is(got[0]?.span.start, report.indexOf('quest=12713'))
  assert.match(provenanceText(got[0]!), /^quest 12713: link "quest=12713" at characters \d+-\d+ of the report$/)
})

extract('the forms real reports use: labels with a colon, bracketed quests, more GM commands', () => {
  const report = [
    'Item: 35228 is not given. Creature: 25744 despawns. [Quest 11912] cannot be completed.',
    'Quest ID 11913 and Spell ID 46202 too.',
    '`.quest complete 11914`, `.quest remove 11915`, `.gobject add 188125`, `.go c id 25743`,',
    '`.cast target 46201`, `.cast self 46203`, `.go c 119367`'
  ].join('\n')
  assert.equal(found(report), [
    'item 35228 label "Item: 35228"',
    'creature 25744 label "Creature: 25744"',
    'quest 11912 label "[Quest 11912]"',
    'quest 11913 label "Quest ID 11913"',
    'spell 46202 label "Spell ID 46202"',
    'quest 11914 command ".quest complete 11914"',
    'quest 11915 command ".quest remove 11915"',
    'gameobject 188125 command ".gobject add 188125"',
    'creature 25743 command ".go c id 25743"',
    'spell 46201 command ".cast target 46201"',
    'spell 46203 command ".cast self 46203"',
    'creature_spawn 119367 command ".go c 119367"'
  ])
  // still no type for a number a word merely precedes
  assert.equal(found('the item 35228 and the creature 25744 and quest 11912'), [])
})

extract('the numbers no pattern typed: ids, not versions, times, dates, paths or words', () => {
  const report =
    'Build 12340, version 3.3.5a, at 12:30 on 2024-05-01: item 35228 and creature 25744 vanish; npc=28503; see src/a/100.cpp and x123 and 99'
  const got = extractEntities(report, patterns)
  assert.equal(untypedNumbers(report, got), ['12340', '35228', '25744'])
  assert.equal(untypedNumbers('a 1234 b 1235 c 1236', [], 2), ['1234', '1235'])
  // typed elsewhere (listed, or extracted at another mention): neither listed nor counted toward the cap
  assert.equal(untypedNumbers('a 1234 b 1235 c 1236', [], 2, new Set(['1234'])), ['1235', '1236'])
})

extract('a report with no ids gives none; a bare number is never given a type', () => {
  assert.equal(found('The wolpertingers vanish when netted. It worked in 3.3.5, not since 2024.'), [])
  assert.equal(found('Players cannot catch 23487 or 11117 any more (see 52307 in the log).'), [])
  assert.equal(found('quest 11117 is broken; spell 52307 does nothing; item 5 is missing'), [])
  assert.equal(found('x.cast 5 and foo.go c 7 are not commands'), [])
})

extract('a listed entity wins over an extracted one with its number', () => {
  const report = 'See https://wowhead.com/quest=10911 and .cast 52307 and Quest ID: 12713.'
  assert.equal(found(report, [{ type: 'item', id: 10911 }]), [
    'spell 52307 command ".cast 52307"',
    'quest 12713 label "Quest ID: 12713"'
  ])
  assert.equal(found(report, [{ type: 'quest', id: '12713' }]), [
    'quest 10911 link "quest=10911"',
    'spell 52307 command ".cast 52307"'
  ])
})

extract('patterns that would type a bare number, or name no number, are refused with the place', () => {
  const bad = (extract: ExtractPattern[]) => left(decodeEnrichment({ entities: {}, extract })).message
  assert.match(bad([{ type: 'quest', pattern: '([0-9]+)' }]), /extract\[0\]: .*matches a bare number/)
  assert.match(bad([{ type: 'quest', pattern: 'quest=[0-9]+' }]), /has 0 capture groups/)
  assert.match(bad([{ type: 'quest', pattern: 'quest=(' }]), /is not a regular expression/)
  assert.match(
    left(decodeEnrichment({ entities: {}, extract: [{ type: 'quest', pattern: 'q=(\\d+)', flags: 'i' }] })).message,
    /extract\[0\]: unknown key flags/
  )
})

extract.run()
