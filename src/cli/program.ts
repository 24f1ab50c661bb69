/** The `vba` command line: commander wiring only; every verb calls the library. */
import { Command, CommanderError } from 'commander'
import { caseGc, caseInit, caseNote, caseUnlock, replay, show, verify, type Out } from './case-verbs.js'
import { CliExit, EXIT, describeThrown } from './io.js'
import { caseQuery, casePrepare, research } from './research-verbs.js'
import { feedback, resume, status } from './investigation-verbs.js'
import { exportVerb, importVerb, isBagTarget, verifyBagVerb } from './transport-verbs.js'

import { VERSION } from '../version.js'
import { investigate, type InvestigateOptions } from './investigate-verb.js'
import { writeDemoWorld } from '../demo/world.js'
export { VERSION }

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

  const kase = program.command('case').description('create and write to case packages')
  kase.command('init <dir>').description('create an empty case package in DIR')
    .option('--id <id>', 'case id (default: case-<uuid>)')
    .option('--title <title>', 'a short human title')
    .action((dir: string, o: { id?: string; title?: string }) => caseInit(io, dir, o))
  kase.command('note <dir> <text>').description('record an operator note')
    .option('--expect-generation <n>', 'refuse unless the case is at generation N')
    .option('--command-id <id>', 'idempotency key (a retry with the same id records nothing new)')
    .option('--markdown', 'the note is Markdown')
    .action((dir: string, text: string, o: { expectGeneration?: string; commandId?: string; markdown?: boolean }) => caseNote(io, dir, text, o))
  kase.command('query <dir>').description('run one project.query inside the case: reserve budget, record the capture as evidence')
    .requiredOption('--config <file>', 'project profile (TOML)')
    .requiredOption('--query <file>', 'query JSON file, or - for stdin')
    .option('--command-id <id>', 'idempotency key (a retry with the same id records nothing new)')
    .action((dir: string, o: { config: string; query: string; commandId?: string }) => caseQuery(io, dir, o))
  kase.command('prepare <dir>').description('add inputs as a new revision, run the configured enrichment, complete the revision')
    .requiredOption('--config <file>', 'project profile with [enrichment] (see config/trinitycore.toml)')
    .requiredOption('--input <file>', 'REPORT.json: {report, entities: [{type, id}], attachments?}')
    .action((dir: string, o: { config: string; input: string }) => casePrepare(io, dir, o))
  kase.command('feedback <dir> <request-id> <text>').description('record lab test feedback (a case waiting for it continues)')
    .action((dir: string, requestId: string, text: string) => feedback(io, dir, requestId, text))
  kase.command('gc <dir>').description('remove what interrupted writers left: orphan objects, old temporary files, an unacknowledged log tail')
    .option('--json', 'the report as JSON')
    .action((dir: string, o: { json?: boolean }) => caseGc(io, dir, o))
  kase.command('unlock <dir>').description('remove the lock of a writer that is gone (check the case first)')
    .option('--force', 'also remove a lock held by another host or a live process')
    .action((dir: string, o: { force?: boolean }) => caseUnlock(io, dir, o))

  program.command('verify <target>').description('verify a case directory, a bag directory or a bag archive: chain, rules, objects; exit 1 on any error finding')
    .option('--json', 'findings as JSON lines, then a summary line')
    .option('--expect-head <seq:hash>', 'a receipt kept outside the case: report a rollback or a fork')
    .action(async (target: string, o: { json?: boolean; expectHead?: string }) => ((await isBagTarget(target)) ? verifyBagVerb(io, target, o) : verify(io, target, o)))
  program.command('export <dir> <out>').description('export a case as a BagIt 1.0 bag: a deterministic tar, or a directory with --dir')
    .option('--dir', 'write a bag directory instead of a tar')
    .action((dir: string, out: string, o: { dir?: boolean }) => exportVerb(io, dir, out, o))
  program.command('import <archive> <dir>').description('verify a bag archive completely, then move its case into DIR')
    .action((archive: string, dir: string) => importVerb(io, archive, dir))
  program.command('replay <dir>').description('rebuild every projection from the log alone')
    .option('--json', 'canonical JSON (byte-identical for the same log)')
    .action((dir: string, o: { json?: boolean }) => replay(io, dir, o))
  program.command('show <dir>').description('summarise a case')
    .option('--json', 'canonical JSON')
    .action((dir: string, o: { json?: boolean }) => show(io, dir, o))
  program.command('status <dir>').description('the lifecycle of the investigation: state, block reason, budget, hypotheses')
    .option('--json', 'JSON')
    .action((dir: string, o: { json?: boolean }) => status(io, dir, o))
  program.command('resume <dir>').description('resume a case blocked by invalid model answers into its stored resume state')
    .option('--manual-retry', 'resume now, before retry_not_before (recorded as manual_retry)')
    .option('--expect-generation <n>', 'refuse unless the case is at generation N')
    .action((dir: string, o: { manualRetry?: boolean; expectGeneration?: string }) => resume(io, dir, o))
  program.command('investigate <dir>').description('start (if needed) and run the investigation of a prepared case with a model, until it concludes, is exhausted or blocked')
    .requiredOption('--config <file>', 'project profile (TOML)')
    .option('--model-command <cmd>', 'run CMD through the shell once per turn: the prompt on its stdin, its stdout is the answer')
    .option('--model-url <url>', 'an OpenAI-compatible chat-completions endpoint (the API key from [model] api_key_env)')
    .option('--model <name>', 'the model name for --model-url')
    .option('--max-turns <n>', 'stop after N model turns (default 20)')
    .option('--manual-retry', 'resume a timed block or retry research now (recorded)')
    .option('--json', 'one JSON line per step, then the result')
    .action((dir: string, o: InvestigateOptions) => investigate(io, dir, o))
  program.command('demo-world <dir>').description('write a demo world into DIR: an SQLite world database, a small core repository and project.toml')
    .action((dir: string) => {
      const w = writeDemoWorld(dir)
      io.out(`wrote the demo world: ${w.profile} (repository commit ${w.commit})`)
    })
  program.command('research').description('run one project.query without a case or a model; print the capture')
    .requiredOption('--config <file>', 'project profile (TOML)')
    .requiredOption('--query <file>', 'query JSON file, or - for stdin')
    .option('--pretty', 'indent the JSON')
    .action((o: { config: string; query: string; pretty?: boolean }) => research(io, o))
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
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.OK
      io.err(`vba: USAGE: ${e.message.replace(/^error: /, '')} (see vba --help)`)
      return EXIT.INPUT
    }
    if (e instanceof CliExit && e.failure === undefined) return e.code
    const d = describeThrown(e)
    io.err(d.line)
    return d.code
  }
}
