/** The `vba` command line: commander wiring only; every verb calls the public client or the library (docs/architecture.md). */
import { Command, CommanderError } from 'commander'
import { CliExit, EXIT, failureLine } from './io.js'
import type { Out } from './case-verbs.js'
import type { InvestigateOptions } from './investigate-verb.js'
import type { WorkVerbOptions } from './fleet-verbs.js'
import type { McpOptions } from './mcp-verb.js'
import { VERSION } from '../version.js'
import { caseAt, closeStores, STORE_HELP, type StoreOption } from './stores.js'

// Each verb's module loads when the verb runs: a command pays only for what it uses (a one-shot
// `vba research` does not load the SQL store drivers, the report renderer or the HTTP server).
type Lazy<F> = F extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never
const lazy = <M, K extends keyof M>(load: () => Promise<M>, key: K): Lazy<M[K]> =>
  (async (...args: unknown[]) => ((await load())[key] as (...a: unknown[]) => unknown)(...args)) as Lazy<M[K]>
const caseVerbs = (): Promise<typeof import('./case-verbs.js')> => import('./case-verbs.js')
const researchVerbs = (): Promise<typeof import('./research-verbs.js')> => import('./research-verbs.js')
const investigationVerbs = (): Promise<typeof import('./investigation-verbs.js')> => import('./investigation-verbs.js')
const transportVerbs = (): Promise<typeof import('./transport-verbs.js')> => import('./transport-verbs.js')
const fleetVerbs = (): Promise<typeof import('./fleet-verbs.js')> => import('./fleet-verbs.js')
const indexVerbs = (): Promise<typeof import('./index-verbs.js')> => import('./index-verbs.js')
const caseGc = lazy(caseVerbs, 'caseGc')
const caseInit = lazy(caseVerbs, 'caseInit')
const caseNote = lazy(caseVerbs, 'caseNote')
const caseUnlock = lazy(caseVerbs, 'caseUnlock')
const replay = lazy(caseVerbs, 'replay')
const reportVerb = lazy(caseVerbs, 'reportVerb')
const show = lazy(caseVerbs, 'show')
const verify = lazy(caseVerbs, 'verify')
const caseQuery = lazy(researchVerbs, 'caseQuery')
const casePrepare = lazy(researchVerbs, 'casePrepare')
const research = lazy(researchVerbs, 'research')
const feedback = lazy(investigationVerbs, 'feedback')
const resume = lazy(investigationVerbs, 'resume')
const status = lazy(investigationVerbs, 'status')
const exportVerb = lazy(transportVerbs, 'exportVerb')
const importVerb = lazy(transportVerbs, 'importVerb')
const isBagTarget = lazy(transportVerbs, 'isBagTarget')
const verifyBagVerb = lazy(transportVerbs, 'verifyBagVerb')
const investigate = lazy(() => import('./investigate-verb.js'), 'investigate')
const serve = lazy(() => import('./serve.js'), 'serve')
const mcp = lazy(() => import('./mcp-verb.js'), 'mcpVerb')
const writeDemoWorld = lazy(() => import('../demo/world.js'), 'writeDemoWorld')
const queueClaim = lazy(fleetVerbs, 'queueClaim')
const queueList = lazy(fleetVerbs, 'queueList')
const queueRelease = lazy(fleetVerbs, 'queueRelease')
const storeImport = lazy(fleetVerbs, 'storeImport')
const storeMigrate = lazy(fleetVerbs, 'storeMigrate')
const workVerb = lazy(fleetVerbs, 'workVerb')
const indexBuild = lazy(indexVerbs, 'indexBuild')
const indexVerify = lazy(indexVerbs, 'indexVerify')
const indexPrune = lazy(indexVerbs, 'indexPrune')
export { VERSION }

/** `vba case …`: create and write to case packages. */
const caseCommands = (program: Command, io: Out): void => {
  const kase = program.command('case').description('create and write to case packages')
  kase
    .command('init <case>')
    .description('create an empty case package in the directory CASE (or, with --store, the case CASE in the store)')
    .option('--id <id>', 'case id (default: case-<uuid>)')
    .option('--title <title>', 'a short human title')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { id?: string; title?: string } & StoreOption) => caseInit(io, dir, o))
  kase
    .command('note <dir> <text>')
    .description('record an operator note')
    .option('--expect-generation <n>', 'refuse unless the case is at generation N')
    .option('--command-id <id>', 'idempotency key (a retry with the same id records nothing new)')
    .option('--markdown', 'the note is Markdown')
    .option('--store <url>', STORE_HELP)
    .action(
      async (
        dir: string,
        text: string,
        o: { expectGeneration?: string; commandId?: string; markdown?: boolean } & StoreOption
      ) => caseNote(io, await caseAt(dir, o), text, o)
    )
  kase
    .command('query <dir>')
    .description('run one project.query inside the case: reserve budget, record the capture as evidence')
    .requiredOption('--config <file>', 'project profile (TOML)')
    .requiredOption('--query <file>', 'query JSON file, or - for stdin')
    .option('--command-id <id>', 'idempotency key (a retry with the same id records nothing new)')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { config: string; query: string; commandId?: string } & StoreOption) =>
      caseQuery(io, await caseAt(dir, o), o)
    )
  kase
    .command('prepare <dir>')
    .description('add inputs as a new revision, run the configured enrichment, complete the revision')
    .requiredOption('--config <file>', 'project profile with [enrichment] (see config/trinitycore.toml)')
    .requiredOption('--input <file>', 'REPORT.json: {report, entities: [{type, id}], attachments?}')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { config: string; input: string } & StoreOption) =>
      casePrepare(io, await caseAt(dir, o), o)
    )
  kase
    .command('feedback <dir> <request-id> <text>')
    .description('record lab test feedback (a case waiting for it continues)')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, requestId: string, text: string, o: StoreOption) =>
      feedback(io, dir, requestId, text, o)
    )
  kase
    .command('gc <dir>')
    .description(
      'remove what interrupted writers left: orphan objects, old temporary files, an unacknowledged log tail'
    )
    .option('--json', 'the report as JSON')
    .action((dir: string, o: { json?: boolean }) => caseGc(io, dir, o))
  kase
    .command('unlock <dir>')
    .description('remove the lock of a writer that is gone (check the case first)')
    .option('--force', 'also remove a lock held by another host or a live process')
    .action((dir: string, o: { force?: boolean }) => caseUnlock(io, dir, o))
}

/** The verbs that read a case, or move it as a bag: verify, export, import, replay, show, report. */
const readCommands = (program: Command, io: Out): void => {
  program
    .command('verify <target>')
    .description(
      'verify a case directory, a bag directory or a bag archive: chain, rules, objects; exit 1 on any error finding'
    )
    .option('--json', 'findings as JSON lines, then a summary line')
    .option('--expect-head <seq:hash>', 'a receipt kept outside the case: report a rollback or a fork')
    .option(
      '--against <profile>',
      're-derive every capture from the world the profile reaches: source at the commit it names (from git objects), database rows when the snapshot id is the same'
    )
    .option('--store <url>', STORE_HELP)
    .action(async (target: string, o: { json?: boolean; expectHead?: string; against?: string } & StoreOption) =>
      o.store === undefined && (await isBagTarget(target)) ? verifyBagVerb(io, target, o) : verify(io, target, o)
    )
  program
    .command('export <dir> <out>')
    .description('export a case as a BagIt 1.0 bag: a deterministic tar, or a directory with --dir')
    .option('--dir', 'write a bag directory instead of a tar')
    .option('--force', 'replace OUT if it is a regular file (never a link, device or directory)')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, out: string, o: { dir?: boolean; force?: boolean } & StoreOption) =>
      exportVerb(io, dir, out, o)
    )
  program
    .command('import <archive> <dir>')
    .description('verify a bag archive completely, then move its case into DIR')
    .action((archive: string, dir: string) => importVerb(io, archive, dir))
  program
    .command('replay <dir>')
    .description('rebuild every projection from the log alone')
    .option('--json', 'canonical JSON (byte-identical for the same log)')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { json?: boolean } & StoreOption) => replay(io, await caseAt(dir, o), o))
  program
    .command('show <dir>')
    .description('summarise a case')
    .option('--json', 'canonical JSON')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { json?: boolean } & StoreOption) => show(io, await caseAt(dir, o), o))
  program
    .command('report <case>')
    .description(
      'write the case report: one self-contained HTML page (no script, no outside resource), byte-identical for the same case'
    )
    .requiredOption('--out <file>', 'the HTML file to write (refused when it exists, unless --force)')
    .option('--force', 'replace FILE if it is a regular file (never a link, device or directory)')
    .option(
      '--against <profile>',
      'also re-derive every capture from the world the profile reaches (as verify --against); the page says at which commit and snapshot'
    )
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { out: string; force?: boolean; against?: string } & StoreOption) =>
      reportVerb(io, await caseAt(dir, o), o)
    )
}

/** The investigation of one case: status, resume, investigate. */
const investigationCommands = (program: Command, io: Out): void => {
  program
    .command('status <dir>')
    .description('the lifecycle of the investigation: state, block reason, budget, hypotheses')
    .option('--json', 'JSON')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { json?: boolean } & StoreOption) => status(io, await caseAt(dir, o), o))
  program
    .command('resume <dir>')
    .description('resume a case blocked by invalid model answers into its stored resume state')
    .option('--manual-retry', 'resume now, before retry_not_before (recorded as manual_retry)')
    .option('--expect-generation <n>', 'refuse unless the case is at generation N')
    .option('--store <url>', STORE_HELP)
    .action(async (dir: string, o: { manualRetry?: boolean; expectGeneration?: string } & StoreOption) =>
      resume(io, dir, o)
    )
  program
    .command('investigate <dir>')
    .description(
      'start (if needed) and run the investigation of a prepared case with a model, until it concludes, is exhausted or blocked'
    )
    .requiredOption('--config <file>', 'project profile (TOML)')
    .option(
      '--model-command <cmd>',
      'run CMD through the shell once per turn: the prompt on its stdin, its stdout is the answer'
    )
    .option(
      '--model-url <url>',
      'an OpenAI-compatible chat-completions endpoint (the API key from [model] api_key_env)'
    )
    .option('--model <name>', 'the model name for --model-url')
    .option('--max-turns <n>', 'stop after N model turns (default 20)')
    .option('--manual-retry', 'resume a timed block or retry research now (recorded)')
    .option('--json', 'one JSON line per step, then the result')
    .option('--store <url>', `${STORE_HELP} (leased for the run, so no worker advances it meanwhile)`)
    .action(async (dir: string, o: InvestigateOptions & StoreOption) => investigate(io, await caseAt(dir, o), o))
}

/** SQL stores and the snapshot index: `vba store …`, `vba index …`. */
const storeAndIndexCommands = (program: Command, io: Out): void => {
  const store = program
    .command('store')
    .description('SQL stores of cases (PostgreSQL, MariaDB/MySQL): schema and import')
  store
    .command('migrate')
    .description("create or upgrade the store's schema (knex migrations)")
    .option('--store <url>', 'the store (default $VBA_STORE)')
    .action((o: StoreOption) => storeMigrate(io, o))
  store
    .command('import <source>')
    .description(
      'verify a case directory, bag directory or bag archive completely, then copy its case into the store; prints the case id'
    )
    .option('--store <url>', 'the store (default $VBA_STORE)')
    .option('--json', 'the case id and generation as JSON')
    .action((source: string, o: StoreOption & { json?: boolean }) => storeImport(io, source, o))

  const index = program
    .command('index')
    .description(
      "the persisted snapshot index of the profile's source commit (in [source] cache_dir, else $XDG_CACHE_HOME/vba, else ~/.cache/vba)"
    )
  index
    .command('build')
    .description('build it now (a deploy step: no research session pays for it later); nothing to do when it is there')
    .requiredOption('--config <file>', 'project profile (TOML)')
    .option('--json', 'the result as JSON')
    .action((o: { config: string; json?: boolean }) => indexBuild(io, o))
  index
    .command('verify')
    .description(
      're-derive all of it from git (listing, sizes, flags, stored bytes, trigram filters); remove it and exit 1 when anything differs'
    )
    .requiredOption('--config <file>', 'project profile (TOML)')
    .option('--json', 'the result as JSON')
    .action((o: { config: string; json?: boolean }) => indexVerify(io, o))
  index
    .command('prune')
    .description("remove the indexes of other commits not used for DAYS days (the profile's commit is kept)")
    .requiredOption('--config <file>', 'project profile (TOML): where the indexes are, which commit to keep')
    .requiredOption('--older-than <days>', 'unused for at least this many days (0: every other commit)')
    .option('--json', 'the result as JSON')
    .action((o: { config: string; olderThan: string; json?: boolean }) => indexPrune(io, o))
}

/** The fleet: `vba queue …` and `vba work`. */
const fleetCommands = (program: Command, io: Out): void => {
  const queue = program.command('queue').description('the work queue: which cases can run now, leases for workers')
  queue
    .command('list [root]')
    .description(
      'every case with its state, block reason, retry time, revision and budget left: runnable now, or why not (ROOT: a folder of case directories)'
    )
    .option('--store <url>', 'list a SQL store (default $VBA_STORE)')
    .option('--json', 'one JSON line per case')
    .action((root: string | undefined, o: StoreOption & { json?: boolean }) => queueList(io, root, o))
  queue
    .command('claim')
    .description('lease one runnable case to a worker (exit 5 when nothing is runnable)')
    .option('--store <url>', 'the store (default $VBA_STORE)')
    .requiredOption('--worker <name>', 'the worker taking the lease')
    .option('--lease-ms <n>', 'how long the lease lasts (default 300000)')
    .option('--json', 'the lease as JSON')
    .action((o: StoreOption & { worker: string; leaseMs?: string; json?: boolean }) => queueClaim(io, o))
  queue
    .command('release <case>')
    .description('give a leased case back to the queue')
    .option('--store <url>', 'the store (default $VBA_STORE)')
    .requiredOption('--worker <name>', 'the worker holding the lease')
    .action((caseId: string, o: StoreOption & { worker: string }) => queueRelease(io, caseId, o))
  program
    .command('work')
    .description(
      'a fleet worker: claim runnable cases from the store, advance them with the model under a lease, release, repeat (SIGINT stops after the current step)'
    )
    .requiredOption('--config <file>', 'project profile (TOML)')
    .option('--store <url>', 'the store (default $VBA_STORE)')
    .option('--worker <name>', "this worker's name (default host.pid)")
    .option('--concurrency <n>', 'cases advanced at the same time (default 1)')
    .option('--lease-ms <n>', 'lease length, renewed every third of it (default 60000)')
    .option('--max-turns <n>', 'model turns per claim (default 20)')
    .option('--until-idle', 'stop once nothing is runnable or leased')
    .option(
      '--model-command <cmd>',
      'run CMD through the shell once per turn: the prompt on its stdin, its stdout is the answer'
    )
    .option(
      '--model-url <url>',
      'an OpenAI-compatible chat-completions endpoint (the API key from [model] api_key_env)'
    )
    .option('--model <name>', 'the model name for --model-url')
    .option('--json', 'one JSON line per worker event')
    .action((o: WorkVerbOptions) => workVerb(io, o))
}

/** Serving and exploring: serve, mcp, demo-world, research. */
const serviceCommands = (program: Command, io: Out): void => {
  program
    .command('serve [root]')
    .description(
      'a read-only local web page listing the cases (state, reason, budget, last activity), each linking to its report'
    )
    .option('--store <url>', 'serve a SQL store (default $VBA_STORE)')
    .option('--port <n>', 'the port (default 8080; 0: any free port)')
    .option('--host <host>', 'the address to bind (default 127.0.0.1)')
    .action((root: string | undefined, o: StoreOption & { port?: string; host?: string }) => serve(io, root, o))
  program
    .command('mcp')
    .description(
      'an MCP server over stdio bound to one prepared case: one tool per query kind the profile enables, every answer recorded as evidence; the evidence as resources'
    )
    .requiredOption('--config <file>', 'project profile (TOML)')
    .requiredOption('--case <case>', 'the case: a directory, or with --store a case id')
    .option('--store <url>', STORE_HELP)
    .action((o: McpOptions) => mcp(io, o))
  program
    .command('demo-world <dir>')
    .description('write a demo world into DIR: an SQLite world database, a small core repository and project.toml')
    .action(async (dir: string) => {
      const w = await writeDemoWorld(dir)
      io.out(`wrote the demo world: ${w.profile} (repository commit ${w.commit})`)
    })
  program
    .command('research')
    .description('run one project.query without a case or a model; print the capture')
    .requiredOption('--config <file>', 'project profile (TOML)')
    .requiredOption('--query <file>', 'query JSON file, or - for stdin')
    .option('--pretty', 'indent the JSON')
    .action((o: { config: string; query: string; pretty?: boolean }) => research(io, o))
}

/** The whole command line; the verb groups in the order `vba --help` lists them. */
const buildProgram = (io: Out): Command => {
  const program = new Command('vba')
    .description('Provable, event-sourced bug investigations: case packages, research, replay')
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      writeErr: (s) => io.err(s.replace(/\n$/, '')),
      // Usage errors are printed once, in the CLI's own one-line format (see run()).
      outputError: () => undefined
    })
  caseCommands(program, io)
  readCommands(program, io)
  investigationCommands(program, io)
  storeAndIndexCommands(program, io)
  fleetCommands(program, io)
  serviceCommands(program, io)
  return program
}

/** Runs the CLI and resolves to the exit code; never throws. */
export const run = async (argv: readonly string[], io: Out): Promise<number> => {
  const program = buildProgram(io)
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return EXIT.OK
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')
        return EXIT.OK
      io.err(`vba: USAGE: ${e.message.replace(/^error: /, '')} (see vba --help)`)
      return EXIT.INPUT
    }
    if (e instanceof CliExit) return e.code
    const { line, code } = failureLine(e)
    io.err(line)
    return code
  } finally {
    await closeStores()
  }
}
