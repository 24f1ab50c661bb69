/**
 * `vba eval SUITE …` (run or resume an evaluation) and `vba eval score DIR` (recompute its scores
 * from the kept cases): commander wiring only; the verbs load when they run (eval-verb.ts).
 */
import { Option, type Command } from 'commander'
import type { Out } from './case-verbs.js'
import { concurrencyOption, configOption, maxTurnsOption, modelOptions } from './options.js'
import type { EvalRunOptions, EvalScoreOptions } from './eval-verb.js'

const evalVerb = (): Promise<typeof import('./eval-verb.js')> => import('./eval-verb.js')

export const evalCommands = (program: Command, io: Out): void => {
  const ev = program
    .command('eval')
    .description(
      'measure investigations on a suite of real bugs: each bug a case at its own commit, scored from the cases (docs/evaluation.md)'
    )
  const runVerb = ev
    .command('run <suite>', { isDefault: true })
    .description('run (or resume) an evaluation: vba eval SUITE --config P --model-… --out DIR')
    .addOption(configOption())
    .requiredOption('--out <dir>', 'the run folder: cases/, reports/, results.json, summary.html')
    .option('--repository <path>', 'the repository the bugs are investigated in (default: the profile [source])')
    .option(
      '--baseline',
      'the deterministic baseline model (no LLM): search the report terms, read the best hit, conclude'
    )
  for (const m of modelOptions()) runVerb.addOption(m)
  runVerb
    .addOption(concurrencyOption().default(1))
    .addOption(maxTurnsOption('model turns of one investigation, in all'))
    .option('--json', 'results.json on stdout instead of the table')
    .action(async (suite: string, o: EvalRunOptions) => (await evalVerb()).evalRun(io, suite, o))
  ev.command('score <dir>')
    .description(
      'recompute every score of a run from its cases (each verified first) and the suite; compare with results.json'
    )
    .option('--suite <dir>', 'the suite (default: the one the run names in run.json)')
    .option('--repository <path>', 'the repository for truths given as fix commits (default: the one run.json names)')
    .addOption(new Option('--out <file>', 'write the recomputed results there (a new file)'))
    .option('--force', 'replace the --out file when it exists (a regular file only)')
    .option('--json', 'the recomputed results.json on stdout instead of the table')
    .action(async (dir: string, o: EvalScoreOptions) => (await evalVerb()).evalScore(io, dir, o))
}
