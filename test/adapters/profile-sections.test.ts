import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeProfile } from '../../src/adapters/config/profile.js'
import { left } from '../helpers/fs.js'

const sections = suite('profile sections')

sections('a section named after an Object.prototype member is an unknown section, not a crash', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    const failure = left(decodeProfile('/tmp/vba-profile.toml', `[${name}]\na = 1\n`))
    assert.is(failure.code, 'CONFIG_INVALID', name)
    assert.match(failure.message, `unknown section [${name}]`, name)
  }
})

sections('a known section still decodes past the section check', () => {
  const failure = left(decodeProfile('/tmp/vba-profile.toml', '[limits]\nno_such_key = 1\n'))
  assert.is(failure.code, 'CONFIG_INVALID')
  assert.not.match(failure.message, 'unknown section')
})

sections.run()
