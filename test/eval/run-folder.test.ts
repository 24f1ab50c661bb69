/** What a run records of its model: a command's program name, an endpoint's origin; never a secret. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { endpointOrigin, modelLabel } from '../../src/eval/run-folder.js'
import { programOf } from '../../src/investigation/models.js'

const s = suite('eval run folder')

s('a command model is its program name: no argument, no assignment before it, no path', () => {
  for (const [command, program] of [
    ['my-llm-cli', 'my-llm-cli'],
    ['/opt/llm/bin/ask --api-key sk-SECRET1 --model big', 'ask'],
    ['OPENAI_API_KEY=sk-SECRET1 TOKEN="a b SECRET2" llm', 'llm'],
    ["KEY='SECRET3' /usr/bin/env -i OTHER=SECRET4 python3 model.py", 'python3'],
    ['"/usr/local/bin/node" "/tmp/model.mjs"', 'node']
  ] as const) {
    assert.is(programOf(command), program, command)
    assert.is(modelLabel({ kind: 'command', program: programOf(command) }), `command ${program}`)
  }
})

s("an endpoint is its URL's origin: no credentials, path or query", () => {
  assert.is(endpointOrigin('https://user:SECRET@llm.example:8443/v1?key=SECRET#x'), 'https://llm.example:8443')
  assert.is(endpointOrigin('http://127.0.0.1:8000/v1'), 'http://127.0.0.1:8000')
  assert.is(
    modelLabel({ kind: 'http', origin: endpointOrigin('http://127.0.0.1:8000/v1'), name: 'qwen' }),
    'qwen at http://127.0.0.1:8000'
  )
})

s.run()
