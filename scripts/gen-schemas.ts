/** Writes case-format/schemas/*.json from the codecs (npm run schemas). */
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { caseFormatSchemas } from '../src/events/schemas.js'
import { repoRoot } from '../test/helpers/fs.js'
import { truthSchema } from '../src/eval/suite.js'

const dir = path.join(repoRoot(), 'case-format', 'schemas')
for (const [name, schema] of Object.entries(caseFormatSchemas())) {
  writeFileSync(path.join(dir, name), `${JSON.stringify(schema, null, 2)}\n`)
  process.stdout.write(`wrote case-format/schemas/${name}\n`)
}
writeFileSync(path.join(repoRoot(), 'eval', 'truth.schema.json'), `${JSON.stringify(truthSchema(), null, 2)}\n`)
process.stdout.write('wrote eval/truth.schema.json\n')
