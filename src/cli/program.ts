/** The `vba` command line: commander wiring only; every verb calls the public client or the library (docs/architecture.md). */
import { Command, CommanderError, Option } from 'commander'
import { CliExit, EXIT, failureLine, terminalText } from './io.js'
import type { Out } from './case-verbs.js'
import type { InvestigateOptions } from './investigate-verb.js'
import { VERSION } from '../version.js'
import { fail } from '../failures/error.js'
import { caseAt, closeStores, type StoreOption } from './stores.js'
import { evalCommands } from './eval-commands.js'
import { fleetCommands, serviceCommands } from './service-commands.js'
import { groupsFor, lazy, lazyVerbs, type Build, type VerbGroup } from './verb-build.js'
import { storeAndIndexCommands } from './store-index-commands.js'
import { useSigner } from './signing-option.js'
import {
  againstOption,
  commandIdOption,
  configOption,
  expectGenerationOption,
  forceOption,
  maxTurnsOption,
  modelOptions,
  RESUME_HELP,
  SIGN_KEY_HELP,
  STORE_HELP,
  trustActorOption,
  trustOption,
  type TrustOptions
} from './options.js'

// Each verb's module loads when the verb runs: a command pays only for what it uses (a one-shot
// `vba research` does not load the SQL store drivers, the report renderer or the HTTP server).
const caseVerbs = lazyVerbs(() => import('./case-verbs.js'))
const researchVerbs = lazyVerbs(() => import('./research-verbs.js'))
const investigationVerbs = lazyVerbs(() => import('./investigation-verbs.js'))
const transportVerbs = lazyVerbs(() => import('./transport-verbs.js'))
const investigate = lazy(() => import('./investigate-verb.js'), 'investigate')
const headVerb = lazy(() => import('./head-verb.js'), 'headVerb')
const keysVerbs = lazyVerbs(() => import('./keys-verbs.js'))
export { VERSION }
export { EXIT, nonUtf8Argument } from './io.js'

/** `vba case …`: create and write to case packages. */
const caseCommands = (program: Command, { io, storeVerb }: Build): void => {
  const kase = program.command('case').description('create and write to case packages')
  storeVerb(kase, 'init <case>')
    .description('create an empty case package in the directory CASE (or, with --store, the case CASE in the store)')
    .option('--id <id>', 'case id (default: case-<uuid>)')
    .option('--title <title>', 'a short human title')
    .action(async (dir: string, o: { id?: string; title?: string } & StoreOption) => caseVerbs.caseInit(io, dir, o))
  storeVerb(kase, 'note <dir> <text>')
    .description('record an operator note')
    .addOption(expectGenerationOption())
    .addOption(commandIdOption())
    .option('--markdown', 'the note is Markdown')
    .action(
      async (
        dir: string,
        text: string,
        o: { expectGeneration?: number; commandId?: string; markdown?: boolean } & StoreOption
      ) => caseVerbs.caseNote(io, await caseAt(dir, o), text, o)
    )
  storeVerb(kase, 'query <dir>')
    .description('run one project.query inside the case: reserve budget, record the capture as evidence')
    .addOption(configOption())
    .requiredOption('--query <file>', 'query JSON file, or - for stdin')
    .addOption(commandIdOption())
    .action(async (dir: string, o: { config: string; query: string; commandId?: string } & StoreOption) =>
      researchVerbs.caseQuery(io, await caseAt(dir, o), o)
    )
  storeVerb(kase, 'prepare <dir>')
    .description('add inputs as a new revision, run the configured enrichment, complete the revision')
    .addOption(configOption('project profile with [enrichment] (see config/trinitycore.toml)'))
    .requiredOption(
      '--input <file>',
      'REPORT.json ({report, entities: [{type, id}], attachments?}), a gh issue view --json number,title,body,url,labels,comments export, or Markdown/text'
    )
    .option('--no-extract', "find no entities in the report (the profile's [[enrichment.extract]] patterns)")
    .option(
      '--again',
      'the inputs a completed revision holds: record a new revision with fresh enrichment (after fixing the database, say); the earlier revision stays'
    )
    .action(
      async (dir: string, o: { config: string; input: string; extract: boolean; again?: boolean } & StoreOption) =>
        researchVerbs.casePrepare(io, await caseAt(dir, o), o)
    )
  storeVerb(kase, 'summary <case>')
    .description(
      'the case as a comment for its issue: the conclusion, the hypotheses, the cited source windows, the budget spent, the verification status'
    )
    .requiredOption('--markdown', 'as Markdown (the only format)')
    .option('--config <file>', 'a project profile whose [source] web_view turns the cited windows into permalinks')
    .action(async (dir: string, o: { markdown: boolean; config?: string } & StoreOption) =>
      caseVerbs.summaryVerb(io, await caseAt(dir, o), o)
    )
  storeVerb(kase, 'feedback <dir> <request-id> <text>')
    .description('record lab test feedback (a case waiting for it continues)')
    .action(async (dir: string, requestId: string, text: string, o: StoreOption) =>
      investigationVerbs.feedback(io, dir, requestId, text, o)
    )
  kase
    .command('gc <dir>')
    .description(
      'remove what interrupted writers left: orphan objects, old temporary files, an unacknowledged log tail'
    )
    .option('--json', 'the report as JSON')
    .action((dir: string, o: { json?: boolean }) => caseVerbs.caseGc(io, dir, o))
  kase
    .command('unlock <dir>')
    .description('remove the lock of a writer that is gone (check the case first)')
    .option('--force', 'also remove a lock held by another host or a live process')
    .action((dir: string, o: { force?: boolean }) => caseVerbs.caseUnlock(io, dir, o))
}

/** The verbs that read a case, or move it as a bag: verify, export, import, replay, show, report. */
const readCommands = (program: Command, { io, storeVerb }: Build): void => {
  storeVerb(program, 'verify <target>')
    .description(
      'verify a case directory, a bag directory or a bag archive: chain, rules, objects; exit 1 on any error finding'
    )
    .option('--json', 'findings as JSON lines, then a summary line')
    .option(
      '--expect-head <receipt>',
      'a receipt kept outside the case (SEQ:HASH, or the file of a signed head, checked against --trust): report a rollback or a fork'
    )
    .addOption(
      againstOption(
        're-derive every capture from the world the profile reaches: source at the commit it names (from git objects), database rows when the snapshot id is the same'
      )
    )
    .option(
      '--strict',
      'every rule applies: what the rules could not check (RULE_NOT_APPLIED: old event versions, no binding recorded) is an error'
    )
    .addOption(trustOption())
    .addOption(trustActorOption())
    .option('--require-signed', 'every command must be signed (UNSIGNED_COMMAND otherwise)')
    .action(
      async (
        target: string,
        o: { json?: boolean; expectHead?: string; against?: string; strict?: boolean } & TrustOptions & StoreOption
      ) =>
        o.store === undefined && (await transportVerbs.isBagTarget(target))
          ? transportVerbs.verifyBagVerb(io, target, o)
          : caseVerbs.verify(io, target, o)
    )
  storeVerb(program, 'export <dir> <out>')
    .description('export a case as a BagIt 1.0 bag: a deterministic tar, or a directory with --dir')
    .option('--dir', 'write a bag directory instead of a tar')
    .addOption(forceOption('OUT'))
    .action(async (dir: string, out: string, o: { dir?: boolean; force?: boolean } & StoreOption) =>
      transportVerbs.exportVerb(io, dir, out, o)
    )
  program
    .command('import <archive> <dir>')
    .description('verify a bag archive completely, then move its case into DIR')
    .option('--strict', 'refuse a case whose rules did not all apply (as verify --strict)')
    .addOption(trustOption())
    .addOption(trustActorOption())
    .option('--require-signed', 'refuse a case with an unsigned command (as verify --require-signed)')
    .action((archive: string, dir: string, o: { strict?: boolean } & TrustOptions) =>
      transportVerbs.importVerb(io, archive, dir, o)
    )
  storeVerb(program, 'head <case>')
    .description(
      "the case's head as a receipt (SEQ:HASH); with a signing key (--sign-key), a signed head (a C2SP signed note) that verify --expect-head FILE --trust FILE checks"
    )
    .option(
      '--cosign <file>',
      "add this key's signature to the signed head in FILE, after verifying this case holds its head (a witness)"
    )
    .option('--json', 'the case id, seq, hash and signed head as JSON')
    .action((ref: string, o: { cosign?: string; json?: boolean } & StoreOption) => headVerb(io, ref, o))
  storeVerb(program, 'replay <dir>')
    .description('rebuild every projection from the log alone')
    .option('--json', 'canonical JSON (byte-identical for the same log)')
    .action(async (dir: string, o: { json?: boolean } & StoreOption) => caseVerbs.replay(io, await caseAt(dir, o), o))
  storeVerb(program, 'show <dir>')
    .description('summarise a case')
    .option('--json', 'canonical JSON')
    .action(async (dir: string, o: { json?: boolean } & StoreOption) => caseVerbs.show(io, await caseAt(dir, o), o))
  storeVerb(program, 'report <case>')
    .description(
      'write the case report: one self-contained HTML page (no script, no outside resource), byte-identical for the same case'
    )
    .requiredOption('--out <file>', 'the HTML file to write (refused when it exists, unless --force)')
    .addOption(forceOption('FILE'))
    .addOption(
      againstOption(
        'also re-derive every capture from the world the profile reaches (as verify --against); the page says at which commit and snapshot'
      )
    )
    .option('--config <file>', 'a project profile whose [source] web_view links the source windows to the repository')
    .action(async (dir: string, o: { out: string; force?: boolean; against?: string; config?: string } & StoreOption) =>
      caseVerbs.reportVerb(io, await caseAt(dir, o), o)
    )
}

/** The investigation of one case: status, resume, investigate. */
const investigationCommands = (program: Command, { io, storeVerb }: Build): void => {
  storeVerb(program, 'status <dir>')
    .description('the lifecycle of the investigation: state, block reason, budget, hypotheses')
    .option('--json', 'JSON')
    .action(async (dir: string, o: { json?: boolean } & StoreOption) =>
      investigationVerbs.status(io, await caseAt(dir, o), o)
    )
  storeVerb(program, 'resume <dir>')
    .description(RESUME_HELP)
    .option('--manual-retry', 'resume now, before retry_not_before (recorded as manual_retry)')
    .addOption(expectGenerationOption())
    .action(async (dir: string, o: { manualRetry?: boolean; expectGeneration?: number } & StoreOption) =>
      investigationVerbs.resume(io, dir, o)
    )
  const investigateVerb = storeVerb(program, 'investigate <dir>')
    .description(
      'start (if needed) and run the investigation of a prepared case with a model, until it concludes, is exhausted or blocked; a case in a store is leased for the run, so no worker advances it meanwhile'
    )
    .addOption(configOption())
  for (const m of modelOptions()) investigateVerb.addOption(m)
  investigateVerb
    .addOption(maxTurnsOption('stop after N model turns'))
    .option('--manual-retry', 'resume a timed block or retry research now (recorded)')
    .option('--json', 'one JSON line per step, then the result')
    .action(async (dir: string, o: InvestigateOptions & StoreOption) => investigate(io, await caseAt(dir, o), o))
}

/** Signing keys: `vba keys new|show`. */
const keysCommands = (program: Command, { io }: Build): void => {
  const keys = program
    .command('keys')
    .description('Ed25519 signing keys in the OpenSSH format (ssh-keygen -t ed25519 files work too)')
  keys
    .command('new <path>')
    .description('write a new signing key to PATH (mode 0600) and PATH.pub; print its allowed_signers line')
    .requiredOption('--principal <name>', 'the name the trust file lists the key under (alice@example.org, worker-a)')
    .option('--json', 'the result as JSON')
    .action((path: string, o: { principal: string; json?: boolean }) => keysVerbs.keysNew(io, path, o))
  keys
    .command('show <path>')
    .description("a key file's principal (its comment) and SHA256 fingerprint, and its allowed_signers line")
    .option('--json', 'as JSON')
    .action((path: string, o: { json?: boolean }) => keysVerbs.keysShow(io, path, o))
}

/** The verb groups in the order `vba --help` lists them, each with the top-level verbs it adds. */
export const VERB_GROUPS: readonly VerbGroup[] = [
  { verbs: ['case'], add: caseCommands },
  { verbs: ['verify', 'export', 'import', 'head', 'replay', 'show', 'report'], add: readCommands },
  { verbs: ['status', 'resume', 'investigate'], add: investigationCommands },
  { verbs: ['store', 'index'], add: storeAndIndexCommands },
  { verbs: ['queue', 'work'], add: fleetCommands },
  { verbs: ['serve', 'mcp', 'demo-world', 'check', 'research'], add: serviceCommands },
  { verbs: ['keys'], add: keysCommands },
  { verbs: ['eval'], add: (program, build) => evalCommands(program, build.io) }
]

/**
 * The command line with the verb `argv` names (only its group is built: a one-shot command does
 * not build every verb), or with every verb. `--store` is one global option: the verbs made with
 * `storeVerb` get its value (or none) and list it under "Global Options"; any other verb refuses
 * it as an unknown option, as before it was global.
 */
export const buildProgram = (io: Out, argv: readonly string[] = []): Command => {
  const store = new Option('--store <url>', STORE_HELP).hideHelp()
  const takesStore = new WeakSet<Command>()
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
    .configureHelp({
      showGlobalOptions: true,
      visibleGlobalOptions: (cmd) => (takesStore.has(cmd) ? [store] : [])
    })
    .addOption(store)
    .addOption(new Option('--sign-key <path>', SIGN_KEY_HELP))
    .option('--sign-principal <name>', "the signer's principal (default: the key's comment)")
    .hook('preAction', useSigner)
    .hook('preAction', (_root, verb) => refuseEmptyPaths(verb))
    .hook('preAction', (root, verb) => {
      const url: unknown = root.getOptionValue('store')
      if (url === undefined) return
      if (!takesStore.has(verb)) verb.error("error: unknown option '--store'", { code: 'commander.unknownOption' })
      verb.setOptionValue('store', url)
    })
  const build: Build = {
    io,
    storeVerb: (parent, spec) => {
      const verb = parent.command(spec)
      takesStore.add(verb)
      return verb
    }
  }
  for (const group of groupsFor(VERB_GROUPS, argv)) group.add(program, build)
  return program
}

/** The arguments that name a directory, a file or a case. */
const PATH_ARGUMENTS: ReadonlySet<string> = new Set([
  'dir',
  'target',
  'out',
  'archive',
  'case',
  'path',
  'root',
  'suite'
])

/**
 * An empty name where a directory, a file or a case goes is refused: it would mean the current
 * directory (`vba case init "$DIR"` with DIR unset said ' exists and is not empty').
 */
const refuseEmptyPaths = (verb: Command): void => {
  const words: string[] = []
  for (let c: Command | null = verb; c?.parent != null; c = c.parent) words.unshift(c.name())
  verb.registeredArguments.forEach((a, k) => {
    if (PATH_ARGUMENTS.has(a.name()) && verb.processedArgs[k] === '')
      fail(
        'INVALID_ARGUMENT',
        `the ${a.name()} argument of vba ${words.join(' ')} is empty (an unset shell variable?): give a name; . is the current directory`
      )
  })
}

/** Runs the CLI and resolves to the exit code; never throws. */
export const run = async (argv: readonly string[], io: Out): Promise<number> => {
  const program = buildProgram(io, argv)
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return EXIT.OK
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')
        return EXIT.OK
      // Commander puts its suggestion on a line of its own ("\n(Did you mean status?)"): one line here.
      const said = e.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ')
      io.err(terminalText(`vba: USAGE: ${said} (see vba --help)`))
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
