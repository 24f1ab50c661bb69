/** SQL stores and the snapshot index, `vba store …` and `vba index …`: commander wiring only. */
import { Option, type Command } from 'commander'
import type { StoreOption } from './stores.js'
import { configOption, days, trustActorOption, trustOption, type TrustOptions } from './options.js'
import { lazyVerbs, type Build } from './verb-build.js'

const fleetVerbs = lazyVerbs(() => import('./fleet-verbs.js'))
const indexVerbs = lazyVerbs(() => import('./index-verbs.js'))

/** SQL stores and the snapshot index: `vba store …`, `vba index …`. */
export const storeAndIndexCommands = (program: Command, { io, storeVerb }: Build): void => {
  const store = program
    .command('store')
    .description('SQL stores of cases (PostgreSQL, MariaDB/MySQL): schema and import')
  storeVerb(store, 'migrate')
    .description("create or upgrade the store's schema (knex migrations)")
    .action((o: StoreOption) => fleetVerbs.storeMigrate(io, o))
  storeVerb(store, 'import <source>')
    .description(
      'verify a case directory, bag directory or bag archive completely, then copy its case into the store; prints the case id'
    )
    .option('--json', 'the case id and generation as JSON')
    .option('--strict', 'refuse a case whose rules did not all apply (as verify --strict)')
    .addOption(trustOption())
    .addOption(trustActorOption())
    .option('--require-signed', 'refuse a case with an unsigned command (as verify --require-signed)')
    .action((source: string, o: StoreOption & { json?: boolean; strict?: boolean } & TrustOptions) =>
      fleetVerbs.storeImport(io, source, o)
    )

  const index = program
    .command('index')
    .description(
      "the persisted snapshot index of the profile's source commit (in [source] cache_dir, else $XDG_CACHE_HOME/vba, else ~/.cache/vba)"
    )
  index
    .command('build')
    .description('build it now (a deploy step: no research session pays for it later); nothing to do when it is there')
    .addOption(configOption())
    .option('--json', 'the result as JSON')
    .action((o: { config: string; json?: boolean }) => indexVerbs.indexBuild(io, o))
  index
    .command('verify')
    .description(
      're-derive all of it from git (listing, sizes, flags, stored bytes, trigram filters); remove it and exit 1 when anything differs'
    )
    .addOption(configOption())
    .option('--json', 'the result as JSON')
    .action((o: { config: string; json?: boolean }) => indexVerbs.indexVerify(io, o))
  index
    .command('prune')
    .description("remove the indexes of other commits not used for DAYS days (the profile's commit is kept)")
    .addOption(configOption('project profile (TOML): where the indexes are, which commit to keep'))
    .addOption(
      new Option('--older-than <days>', 'unused for at least this many days (0: every other commit)')
        .argParser(days('--older-than'))
        .makeOptionMandatory()
    )
    .option('--json', 'the result as JSON')
    .action((o: { config: string; olderThan: number; json?: boolean }) => indexVerbs.indexPrune(io, o))
}
