/**
 * New cases in the SQL store: an empty case (its declaration and an empty log), and a verified
 * case package copied in whole (the exact line bytes, commands and objects; the queue columns
 * from the case's state), each in one transaction; CASE_EXISTS when the id is taken.
 */
import { statSync } from 'node:fs'
import * as path from 'node:path'
import type { Knex } from 'knex'
import * as E from 'fp-ts/lib/Either.js'
import { ruleFold } from '../../domain/rules.js'
import { canonicalJson } from '../../events/canonical.js'
import { genesisHash } from '../../events/chain.js'
import { CASE_FORMAT, CASE_FORMAT_VERSION, CaseDeclaration, EventEnvelope } from '../../events/envelope.js'
import { CURRENT_FORMAT_GENERATION } from '../../events/generations.js'
import { isError } from '../../events/findings.js'
import { collectRefs, objectPath } from '../../events/refs.js'
import { VERSION } from '../../version.js'
import { systemEnv, type Env } from '../env.js'
import { fail, type FailureError } from '../../failures/error.js'
import { scanCase } from '../case-store/scan.js'
import { verifyCase } from '../case-store/verify.js'
import { DECLARATION_FILE, LOG_FILE } from '../case-store/layout.js'
import type { SqlContext } from './connection.js'
import { INSERT_ROWS, insertEvents, queueColumns } from './rows.js'
import { readRegular } from '../regular-file.js'
import { optional } from '../../optional.js'

const insertCase = async (
  ctx: SqlContext,
  work: (trx: Knex.Transaction) => Promise<void>,
  caseId: string
): Promise<void> => {
  try {
    await ctx.transaction(work)
  } catch (e) {
    const code = (e as FailureError).failure?.data?.['driver_code']
    if (code === '23505' || code === 'ER_DUP_ENTRY')
      fail('CASE_EXISTS', `the store ${ctx.display} already holds case ${caseId}`, { case_id: caseId })
    throw e
  }
}

/** Creates an empty case. */
export const createInStore = async (
  ctx: SqlContext,
  caseId: string,
  o: { readonly title?: string; readonly env?: Env }
): Promise<CaseDeclaration> => {
  const env = o.env ?? systemEnv
  const decoded = CaseDeclaration.decode({
    format: CASE_FORMAT,
    format_version: CASE_FORMAT_VERSION,
    case_id: caseId,
    created_at: env.now().toISOString(),
    created_by: `vba ${VERSION}`,
    format_generation: CURRENT_FORMAT_GENERATION,
    ...optional('title', o.title)
  })
  if (E.isLeft(decoded))
    return fail(
      'INVALID_ARGUMENT',
      'case id must be 1-128 characters of letters, digits, . _ : - (starting with a letter or digit)',
      { case_id: caseId }
    )
  const text = canonicalJson(decoded.right)
  const genesis = genesisHash(decoded.right)
  if (E.isLeft(text) || E.isLeft(genesis)) return fail('INTERNAL_ERROR', 'declaration is not canonicalisable')
  await insertCase(
    ctx,
    async (trx) => {
      await trx('vba_cases').insert({
        case_id: caseId,
        declaration: Buffer.from(`${text.right}\n`),
        created_at: decoded.right.created_at,
        generation: 0,
        head_hash: genesis.right,
        log_bytes: 0,
        updated_ms: Date.parse(decoded.right.created_at),
        ...queueColumns(ruleFold().state())
      })
    },
    caseId
  )
  return decoded.right
}

/** The digests a log references (in order of first reference). */
const referencedObjects = (log: Buffer): string[] => {
  const seen = new Set<string>()
  for (const line of log.toString('utf8').split('\n')) {
    if (line === '') continue
    for (const r of collectRefs((JSON.parse(line) as { data?: unknown }).data).refs) seen.add(r.digest)
  }
  return [...seen]
}

/** Copies a verified case package (a directory) in; CASE_CORRUPT (nothing imported) when it does not verify. */
export const importIntoStore = async (
  ctx: SqlContext,
  dir: string,
  options: { readonly strict?: boolean } = {}
): Promise<{ case_id: string; generation: number }> => {
  const root = path.resolve(dir)
  const report = await verifyCase(root, options.strict === true ? { strict: true } : {})
  if (!report.valid) {
    const errors = report.findings.filter(isError)
    fail(
      'CASE_CORRUPT',
      `the case does not verify: ${errors.length} finding(s), first: ${errors[0]?.code ?? 'unknown'}; nothing was imported`,
      { findings: errors.slice(0, 20) }
    )
  }
  const declBytes = await readRegular(path.join(root, DECLARATION_FILE), {
    maxBytes: 64 << 10,
    shown: DECLARATION_FILE
  })
  const log = await readRegular(path.join(root, LOG_FILE), { shown: LOG_FILE })
  const head = report.head
  if (head === null) return fail('INTERNAL_ERROR', 'a valid case without a head')
  const decl = CaseDeclaration.decode(JSON.parse(declBytes.toString('utf8')))
  if (E.isLeft(decl)) return fail('INTERNAL_ERROR', 'a valid case with an invalid declaration')
  const caseId = decl.right.case_id
  // The state, commands and rows, from the same bytes (the log up to HEAD).
  const limit = log.subarray(0, report.log_bytes)
  const rows: Array<{ seq: number; command_id: string; hash: string; line: Buffer }> = []
  const commands = new Map<string, { first_seq: number; last_seq: number }>()
  let s = 0
  let lastAt: string | null = null
  while (s < limit.length) {
    const nl = limit.indexOf(10, s)
    const line = limit.subarray(s, nl)
    const env = EventEnvelope.decode(JSON.parse(line.toString('utf8')))
    if (E.isLeft(env)) return fail('INTERNAL_ERROR', 'a valid case with an undecodable event')
    rows.push({ seq: env.right.seq, command_id: env.right.command_id, hash: env.right.hash, line: Buffer.from(line) })
    const c = commands.get(env.right.command_id)
    if (c === undefined) commands.set(env.right.command_id, { first_seq: env.right.seq, last_seq: env.right.seq })
    else c.last_seq = env.right.seq
    lastAt = env.right.at
    s = nl + 1
  }
  const scanState = (await scanCase(root, { canonical: false })).state
  // Each object is read when it is inserted (one in memory at a time), as a regular file only.
  const files = referencedObjects(limit).map((digest) => {
    const file = path.join(root, objectPath(digest))
    return { digest, size: statSync(file).size, read: () => readRegular(file, { shown: objectPath(digest) }) }
  })
  await alreadyHeld(ctx, caseId, `${head.seq}:${head.hash}`, () =>
    insertCase(
      ctx,
      async (trx) => {
        await trx('vba_cases').insert({
          case_id: caseId,
          declaration: declBytes,
          created_at: decl.right.created_at,
          generation: head.seq,
          head_hash: head.hash,
          log_bytes: limit.length,
          last_event_at: lastAt,
          updated_ms: Date.parse(lastAt ?? decl.right.created_at),
          ...queueColumns(scanState)
        })
        await ctx.objects.insert(trx, files)
        await insertEvents(trx, caseId, rows)
        const cmdRows = [...commands.entries()].map(([command_id, c]) => ({ case_id: caseId, command_id, ...c }))
        for (let i = 0; i < cmdRows.length; i += INSERT_ROWS)
          await trx('vba_commands').insert(cmdRows.slice(i, i + INSERT_ROWS))
      },
      caseId
    )
  )
  return { case_id: caseId, generation: head.seq }
}

/**
 * CASE_EXISTS for an import says how the stored case stands to the imported one: the same head
 * (nothing to import), or another, with the verify that tells whether the stored case extends it.
 */
const alreadyHeld = async (ctx: SqlContext, caseId: string, receipt: string, insert: () => Promise<void>) => {
  try {
    await insert()
  } catch (e) {
    if ((e as FailureError).failure?.code !== 'CASE_EXISTS') throw e
    const row = (await ctx.k('vba_cases').where({ case_id: caseId }).first('generation', 'head_hash')) as
      | { generation: number | string; head_hash: string }
      | undefined
    if (row === undefined) throw e
    const stored = `${Number(row.generation)}:${row.head_hash}`
    fail(
      'CASE_EXISTS',
      stored === receipt
        ? `the store ${ctx.display} already holds case ${caseId} at the same head ${receipt}: nothing to import`
        : `the store ${ctx.display} already holds case ${caseId} at ${stored}, the import is at ${receipt}; nothing was imported (vba verify ${caseId} --store URL --expect-head ${receipt} says whether the stored case holds the import's head)`,
      { case_id: caseId, stored_head: stored, import_head: receipt }
    )
  }
}
