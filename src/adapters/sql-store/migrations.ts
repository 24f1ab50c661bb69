/**
 * The SQL store's schema, as knex migrations (in code, so they ship with the library and run on
 * PostgreSQL and MariaDB/MySQL alike): `vba store migrate --store URL` brings a database to the
 * latest schema; the store refuses to open one that is behind (STORE_SCHEMA_OUTDATED).
 *
 *   vba_cases     one row per case: its declaration (exact bytes), head, and the queue columns
 *                 (state, reason, retry time, revision, budget left, lease; since 0002 the model,
 *                 the tokens spent and the last model failure), updated with every append
 *   vba_events    every event's exact canonical line, by (case_id, seq)
 *   vba_commands  every command id of a case (the constraint that makes command ids idempotent)
 *   vba_objects   content-addressed objects, shared across cases
 *
 * Since 0003 a claim and a listing page read only the rows they return: the `claimable` column
 * (prepared, and runnable or blocked by a timed reason: projections/queue.ts) and an index in the
 * claim's order over it (partial on PostgreSQL; led by the flag on MariaDB, which has no partial
 * indexes), and an index on (state, case_id) for pages filtered by state and the counts per state.
 */
import type { Knex } from 'knex'
import { dialectOfKnex } from './dialect.js'
import { RUNNABLE_STATES, TIMED_REASONS } from '../../projections/queue.js'

export const MIGRATIONS_TABLE = 'vba_migrations'

interface Migration {
  readonly up: (knex: Knex) => Promise<void>
  readonly down: (knex: Knex) => Promise<void>
}

const bytes = (knex: Knex): string => dialectOfKnex(knex).bytes

const quoted = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ')

/**
 * The claimable flag of every existing row, from its queue columns (the same rule as
 * `claimable()`; the states and reasons are this version's constants, not input).
 */
const CLAIMABLE_SQL = `CASE WHEN revision > 0 AND (state IN (${quoted(RUNNABLE_STATES)})
  OR (state = 'BLOCKED' AND reason IN (${quoted(TIMED_REASONS)}))) THEN 1 ELSE 0 END`

const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  [
    '0001_case_store',
    {
      up: async (knex) => {
        await knex.schema.createTable('vba_cases', (t) => {
          t.string('case_id', 128).primary()
          t.specificType('declaration', bytes(knex)).notNullable()
          t.string('created_at', 32).notNullable()
          t.integer('generation').notNullable().defaultTo(0)
          t.string('head_hash', 71).notNullable()
          t.bigInteger('log_bytes').notNullable().defaultTo(0)
          t.string('last_event_at', 32).nullable()
          t.string('state', 32).notNullable().defaultTo('NOT_STARTED')
          t.string('reason', 64).nullable()
          t.string('retry_not_before', 32).nullable()
          t.bigInteger('retry_not_before_ms').nullable()
          t.integer('revision').notNullable().defaultTo(0)
          t.integer('budget_left').nullable()
          t.string('pending_plan', 128).nullable()
          t.string('lease_owner', 128).nullable()
          t.string('lease_token', 64).nullable()
          t.bigInteger('lease_expires_ms').nullable()
          t.bigInteger('updated_ms').notNullable()
          t.index(['state'], 'vba_cases_state')
        })
        await knex.schema.createTable('vba_events', (t) => {
          t.string('case_id', 128).notNullable().references('case_id').inTable('vba_cases')
          t.integer('seq').notNullable()
          t.string('command_id', 128).notNullable()
          t.string('hash', 71).notNullable()
          t.specificType('line', bytes(knex)).notNullable()
          t.primary(['case_id', 'seq'])
        })
        await knex.schema.createTable('vba_commands', (t) => {
          t.string('case_id', 128).notNullable().references('case_id').inTable('vba_cases')
          t.string('command_id', 128).notNullable()
          t.integer('first_seq').notNullable()
          t.integer('last_seq').notNullable()
          t.primary(['case_id', 'command_id'])
        })
        await knex.schema.createTable('vba_objects', (t) => {
          t.string('digest', 71).primary()
          t.bigInteger('size').notNullable()
          t.specificType('bytes', bytes(knex)).notNullable()
        })
      },
      down: async (knex) => {
        for (const t of ['vba_objects', 'vba_commands', 'vba_events', 'vba_cases'])
          await knex.schema.dropTableIfExists(t)
      }
    }
  ],
  [
    '0002_model_columns',
    {
      // Which model answered last, the tokens spent, and why the model failed: shown by queue list.
      up: async (knex) => {
        await knex.schema.alterTable('vba_cases', (t) => {
          t.string('model', 200).nullable()
          t.bigInteger('tokens_total').notNullable().defaultTo(0)
          t.string('last_failure_code', 64).nullable()
          t.string('last_failure_message', 600).nullable()
        })
      },
      down: async (knex) => {
        await knex.schema.alterTable('vba_cases', (t) => {
          t.dropColumns('model', 'tokens_total', 'last_failure_code', 'last_failure_message')
        })
      }
    }
  ],
  [
    '0003_claim_and_page_indexes',
    {
      // Claims and listing pages in time independent of the store's size (see the module comment).
      up: async (knex) => {
        await knex.schema.alterTable('vba_cases', (t) => {
          t.smallint('claimable').notNullable().defaultTo(0)
        })
        await knex.raw(`UPDATE vba_cases SET claimable = ${CLAIMABLE_SQL}`)
        if (dialectOfKnex(knex).name === 'postgres')
          await knex.raw('CREATE INDEX vba_cases_claim ON vba_cases (updated_ms, case_id) WHERE claimable = 1')
        else await knex.raw('CREATE INDEX vba_cases_claim ON vba_cases (claimable, updated_ms, case_id)')
        await knex.schema.alterTable('vba_cases', (t) => {
          t.index(['state', 'case_id'], 'vba_cases_state_case')
        })
        await knex.schema.alterTable('vba_cases', (t) => {
          t.dropIndex(['state'], 'vba_cases_state')
        })
      },
      down: async (knex) => {
        await knex.schema.alterTable('vba_cases', (t) => {
          t.index(['state'], 'vba_cases_state')
        })
        await knex.schema.alterTable('vba_cases', (t) => {
          t.dropIndex(['state', 'case_id'], 'vba_cases_state_case')
          t.dropIndex([], 'vba_cases_claim')
        })
        await knex.schema.alterTable('vba_cases', (t) => {
          t.dropColumn('claimable')
        })
      }
    }
  ]
]

/** The names of every migration, oldest first. */
export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name)

/** knex's migration source for the migrations above. */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => [...MIGRATION_NAMES],
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const m = MIGRATIONS.find(([n]) => n === name)?.[1]
    if (m === undefined) throw new Error(`unknown migration ${name}`)
    return m
  }
}
