/**
 * A signed fleet: two workers with keys of their own and an operator with a third, on PostgreSQL.
 * Every command of every case is signed, vba verify --trust --require-signed names each signer,
 * and ssh-keygen -Y verify accepts a worker's signature extracted from a case.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { loadProfile, prepareRevision } from '../../src/fp.js'
import { migrateStore, openSqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { fixedEnv, systemEnv } from '../../src/adapters/env.js'
import { writeNewKey, type Signer } from '../../src/adapters/ssh-keys.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { work } from '../../src/investigation/worker.js'
import { latestEvidence } from '../../src/investigation/scripted-model.js'
import type { ModelFn } from '../../src/investigation/loop.js'
import { armor } from '../../src/events/ssh-sig.js'
import { signedMessage, type CommandSigned } from '../../src/events/command-signature.js'
import { openVba } from '../../src/index.js'
import { SMART_QUERY, writeWorld } from '../helpers/investigation.js'
import { right, tempDir } from '../helpers/fs.js'
import { postgresStore } from '../helpers/stores.js'
import { vba } from '../helpers/cli.js'

const model: ModelFn = async ({ prompt, phase }) => {
  if (phase === 'interpretation') return JSON.stringify({ interpretation: { summary: 'The creature despawns.' } })
  const evidence = latestEvidence(prompt)
  if (evidence === null)
    return JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: SMART_QUERY } })
  if (!/^ {2}H1 \[/m.test(prompt))
    return JSON.stringify({
      next: { kind: 'hypothesis', action: 'propose', statement: 'SmartAI despawns it.', evidence: [evidence] }
    })
  return JSON.stringify({
    next: { kind: 'conclusion', summary: 'The despawn races the reward.', hypotheses: ['H1'], evidence: [evidence] }
  })
}

const t = suite('a signed fleet')

t('two workers and an operator, each with a key: every command signed, every signer named', async () => {
  const keys = tempDir('fleet-keys')
  const op = await writeNewKey(path.join(keys, 'op'), 'op@example.org')
  const w1 = await writeNewKey(path.join(keys, 'w1'), 'worker-1')
  const w2 = await writeNewKey(path.join(keys, 'w2'), 'worker-2')
  const trustFile = path.join(keys, 'allowed_signers')
  writeFileSync(trustFile, [op, w1, w2].map((k) => `${k.allowedSigners}\n`).join(''))
  const profileFile = writeWorld(tempDir('fleet-world'))
  const profile = right(await loadProfile(profileFile)())
  const research = createProjectResearch(profile)
  const pg = await postgresStore('signedfleet')
  try {
    await migrateStore(pg.url, { environment: {} })
    const store = await openSqlStore(pg.url, { environment: {} })
    const ids = ['case-s1', 'case-s2', 'case-s3', 'case-s4']
    for (const [i, id] of ids.entries()) {
      const env = { ...fixedEnv(`2026-11-30T10:0${i}:00.000Z`, id), signer: op.signer }
      await store.create(id, { caseId: id, env })
      right(
        await prepareRevision(
          { store, caseId: id },
          research,
          right(enrichmentConfig(profile)),
          { report: `Quest 11117 cannot be completed (${id}).`, entities: [{ type: 'quest', id: 11117 }] },
          { env }
        )()
      )
    }
    const run = (name: string, signer: Signer) =>
      work({
        store,
        model,
        research,
        worker: name,
        concurrency: 1,
        leaseMs: 5000,
        pollMs: 20,
        settings: right(settingsOf(profile)),
        untilIdle: true,
        env: { ...systemEnv, signer }
      })
    const [s1, s2] = await Promise.all([run('w1', w1.signer), run('w2', w2.signer)])
    assert.is(s1.concluded + s2.concluded, ids.length)
    const operator = await openVba({ store: pg.url, signer: op.signer })
    for (const id of ids) await operator.cases.note(id, { text: 'reviewed' })
    const seen = new Set<string>()
    const trust = { allowedSigners: `${op.allowedSigners}\n${w1.allowedSigners}\n${w2.allowedSigners}\n` }
    for (const id of ids) {
      const r = await operator.cases.verify(id, { trust, requireSigned: true })
      assert.ok(r.valid, `${id}: ${JSON.stringify(r.findings.slice(0, 3))}`)
      assert.is(r.signatures?.unsigned_commands, 0)
      for (const s of r.signatures?.signers ?? []) {
        assert.is(s.trusted, true)
        seen.add(s.principal)
      }
    }
    assert.equal(
      [...seen].sort(),
      ['op@example.org', 'worker-1', 'worker-2'].filter(
        (p) => p.startsWith('op') || (p === 'worker-1' ? s1.concluded > 0 : s2.concluded > 0)
      )
    )
    const cli = vba(['verify', ids[0] as string, '--store', pg.url, '--trust', trustFile, '--require-signed'])
    assert.is(cli.code, 0, cli.stdout + cli.stderr)
    assert.match(cli.stdout, 'signed by op@example.org')
    assert.match(cli.stdout, /signed by worker-[12] SHA256:/)
    // one worker signature, checked by OpenSSH alone
    const events = await operator.cases.events(ids[0] as string)
    const sig = events.find((e) => e.type === 'CommandSigned' && e.actor === 'model')?.data as CommandSigned
    const sigFile = path.join(keys, 'worker.sig')
    writeFileSync(sigFile, armor(Buffer.from(sig.signature, 'base64')))
    const ok = spawnSync(
      'ssh-keygen',
      ['-Y', 'verify', '-f', trustFile, '-I', sig.principal, '-n', 'vba-case', '-s', sigFile],
      {
        input: signedMessage(sig),
        encoding: 'utf8'
      }
    )
    assert.is(ok.status, 0, ok.stderr)
    assert.match(ok.stdout, `Good "vba-case" signature for ${sig.principal}`)
    await operator.close()
    await store.close()
  } finally {
    await pg.drop()
  }
})

t.run()
