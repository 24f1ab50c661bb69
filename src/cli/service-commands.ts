/** `vba queue …`, `vba work`, and serving and exploring (serve, mcp, demo-world, check, research): commander wiring only. */
import { Option, type Command } from 'commander'
import type { QueueListOptions, WorkVerbOptions } from './fleet-verbs.js'
import { QUEUE_PAGE, QUEUE_STATES } from '../projections/queue.js'
import type { McpOptions } from './mcp-verb.js'
import type { StoreOption } from './stores.js'
import {
  concurrencyOption,
  configOption,
  leaseMsOption,
  maxTurnsOption,
  modelOptions,
  CHECK_HELP,
  CLAIM_LEASE_MS,
  SERVE_HOST,
  SERVE_PORT,
  wholeNumber
} from './options.js'
import { lazy, lazyVerbs, type Build } from './verb-build.js'
import { coded, fail } from '../failures/error.js'
import { terminalText } from './io.js'

const fleetVerbs = lazyVerbs(() => import('./fleet-verbs.js'))
const research = lazy(() => import('./research-verb.js'), 'research')
const check = lazy(() => import('./check-verb.js'), 'checkVerb')
const serve = lazy(() => import('./serve.js'), 'serve')
const mcp = lazy(() => import('./mcp-verb.js'), 'mcpVerb')
const writeDemoWorld = lazy(() => import('../demo/world.js'), 'writeDemoWorld')

/** The fleet: `vba queue …` and `vba work`. */
export const fleetCommands = (program: Command, { io, storeVerb }: Build): void => {
  const queue = program.command('queue').description('the work queue: which cases can run now, leases for workers')
  storeVerb(queue, 'list [root]')
    .description(
      'a page of the cases (by case id; by directory name under ROOT) with state, block reason, retry time, revision and budget left: runnable now, or why not; the counts per state of all of them, and the command for the next page (ROOT: a folder of case directories, or the cases of --store)'
    )
    .option('--after <key>', 'the cases after this case id (directory name): the next page the previous one names')
    .addOption(
      new Option('--limit <n>', `cases per page (default ${QUEUE_PAGE.default})`).argParser(
        wholeNumber('--limit', 1, QUEUE_PAGE.max)
      )
    )
    .addOption(
      new Option('--state <state>', `only cases in this state, repeat for more (${QUEUE_STATES.join(', ')})`).argParser(
        (v: string, prev: string[] | undefined) => {
          if (!(QUEUE_STATES as readonly string[]).includes(v))
            fail(
              'INVALID_ARGUMENT',
              `--state takes one of ${QUEUE_STATES.join(', ')}, got ${JSON.stringify(v.slice(0, 40))}`
            )
          return [...(prev ?? []), v]
        }
      )
    )
    .option('--json', 'one JSON line per case, then {"page": {"next", "counts"}}')
    .action((root: string | undefined, o: QueueListOptions) => fleetVerbs.queueList(io, root, o))
  storeVerb(queue, 'claim')
    .description('lease one runnable case to a worker (exit 5 when nothing is runnable)')
    .requiredOption('--worker <name>', 'the worker taking the lease')
    .addOption(leaseMsOption('how long the lease lasts', CLAIM_LEASE_MS))
    .option('--json', 'the lease as JSON')
    .action((o: StoreOption & { worker: string; leaseMs: number; json?: boolean }) => fleetVerbs.queueClaim(io, o))
  storeVerb(queue, 'release <case>')
    .description('give a leased case back to the queue')
    .requiredOption('--worker <name>', 'the worker holding the lease')
    .action((caseId: string, o: StoreOption & { worker: string }) => fleetVerbs.queueRelease(io, caseId, o))
  const work = storeVerb(program, 'work')
    .description(
      'a fleet worker: claim runnable cases from the store, advance them with the model under a lease, release, repeat (SIGINT stops after the current step)'
    )
    .addOption(configOption())
    .option('--worker <name>', "this worker's name (default host.pid)")
    .addOption(concurrencyOption())
    .addOption(leaseMsOption('lease length, renewed every third of it'))
    .addOption(maxTurnsOption('model turns per claim'))
    .option('--until-idle', 'stop once nothing is runnable or leased')
    .option(
      '--strict',
      'refuse (CASE_CORRUPT, the worker stops) a case whose rules did not all apply (RULE_NOT_APPLIED), as verify --strict'
    )
  for (const m of modelOptions()) work.addOption(m)
  work.option('--json', 'one JSON line per worker event').action((o: WorkVerbOptions) => fleetVerbs.workVerb(io, o))
}

/** Serving and exploring: serve, mcp, demo-world, research. */
export const serviceCommands = (program: Command, { io, storeVerb }: Build): void => {
  storeVerb(program, 'serve [root]')
    .description(
      'a read-only local web page listing the cases (state, reason, budget, last activity), each linking to its report (ROOT: a folder of case directories, or the cases of --store)'
    )
    .addOption(
      new Option('--port <n>', 'the port; 0: any free port')
        .argParser(wholeNumber('--port', 0, 65535, ' (0: any free port)'))
        .default(SERVE_PORT)
    )
    .addOption(new Option('--host <host>', 'the address to bind').default(SERVE_HOST, SERVE_HOST))
    .action((root: string | undefined, o: StoreOption & { port: number; host: string }) => serve(io, root, o))
  storeVerb(program, 'mcp')
    .description(
      'an MCP server over stdio (or Streamable HTTP with --http) bound to one prepared case: one tool per query kind the profile enables, every answer recorded as evidence; the decisions recorded as turns; the prompt investigate; the evidence, contract and report as resources'
    )
    .addOption(configOption())
    .option(
      '--case <case>',
      'the case: a directory, or with --store a case id (with --store and --http: optional, chosen per session at /mcp/CASE)'
    )
    .option(
      '--http <host:port>',
      'serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (127.0.0.1 by default; port 0: any free port)'
    )
    .option(
      '--token-file <file>',
      'with --http: the file holding the bearer token clients send (else the variable VBA_MCP_TOKEN; never on the command line)'
    )
    .action((o: McpOptions) => mcp(io, o))
  program
    .command('demo-world <dir>')
    .description('write a demo world into DIR: an SQLite world database, a small core repository and project.toml')
    .action(async (dir: string) => {
      // A folder that cannot be made is IO_ERROR with its errno, not a bug (INTERNAL_ERROR, exit 70).
      const w = await coded(`write the demo world into ${dir}`, () => writeDemoWorld(dir))
      io.out(terminalText(`wrote the demo world: ${w.profile} (repository commit ${w.commit})`))
    })
  program
    .command('check')
    .description(CHECK_HELP)
    .addOption(configOption())
    .option('--json', 'the report as one JSON object')
    .action((o: { config: string; json?: boolean }) => check(io, o))
  program
    .command('research')
    .description('run one project.query without a case or a model; print the capture')
    .addOption(configOption())
    .requiredOption('--query <file>', 'query JSON file, or - for stdin')
    .option('--pretty', 'indent the JSON')
    .action((o: { config: string; query: string; pretty?: boolean }) => research(io, o))
}
