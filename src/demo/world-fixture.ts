/**
 * A small world database modelled on TrinityCore-family tables, used by the demo (as an embedded
 * SQLite file) and by the integration tests (loaded into a private MariaDB and into SQLite from
 * the same rows). It covers the value types research must keep exact: DECIMAL, BIGINT UNSIGNED,
 * NULL, long text, binary and date-time columns.
 *
 * The numbers are deliberately ambiguous in places, as in real data: 23487 is both a creature
 * entry and a spell id, so nothing may link them by number alone.
 */

export type SqlValue = string | number | bigint | null | Uint8Array

export interface FixtureColumn {
  readonly name: string
  /** MariaDB/MySQL column type with nullability. */
  readonly mysql: string
  /** SQLite declaration (keeps the MySQL type name so research can tell BIGINT from INT). */
  readonly sqlite: string
}

export interface FixtureTable {
  readonly name: string
  readonly columns: readonly FixtureColumn[]
  readonly primaryKey: readonly string[]
  readonly indexes?: ReadonlyArray<{
    readonly name: string
    readonly columns: readonly string[]
    readonly unique: boolean
  }>
  readonly rows: ReadonlyArray<readonly SqlValue[]>
}

const col = (name: string, mysql: string, sqlite?: string): FixtureColumn => ({ name, mysql, sqlite: sqlite ?? mysql })

/** Generated filler creatures, so paging and benchmarks have a table of realistic size. */
const fillerCreatures = (count: number): SqlValue[][] =>
  Array.from({ length: count }, (_, i) => {
    const entry = 100_000 + i
    return [
      entry,
      `Generated Creature ${i}`,
      i % 5 === 0 ? null : `Subname ${i % 17}`,
      1 + (i % 80),
      1 + (i % 80),
      14 + (i % 30),
      BigInt(i % 3) * 4294967296n + BigInt(i),
      1 + (i % 7) / 10,
      `${(1 + (i % 9) / 8).toFixed(4)}`,
      i % 4 === 0 ? 'SmartAI' : '',
      '',
      i % 11 === 0 ? null : 12340 + (i % 7)
    ]
  })

export const WORLD_TABLES: readonly FixtureTable[] = [
  {
    name: 'creature_template',
    columns: [
      col('entry', 'INT UNSIGNED NOT NULL'),
      col('name', "VARCHAR(100) NOT NULL DEFAULT ''"),
      col('subname', 'VARCHAR(100) NULL'),
      col('minlevel', 'TINYINT UNSIGNED NOT NULL DEFAULT 1'),
      col('maxlevel', 'TINYINT UNSIGNED NOT NULL DEFAULT 1'),
      col('faction', 'SMALLINT UNSIGNED NOT NULL DEFAULT 0'),
      col('npcflag', 'BIGINT UNSIGNED NOT NULL DEFAULT 0'),
      col('speed_walk', 'FLOAT NOT NULL DEFAULT 1'),
      // SQLite: the TEXT_ prefix gives TEXT affinity, so DECIMAL digits stay exact; research reports
      // the type it stands for, DECIMAL(14,4) (world-db.ts, SqliteTypes).
      col('DamageModifier', 'DECIMAL(14,4) NOT NULL DEFAULT 1', "TEXT_DECIMAL(14,4) NOT NULL DEFAULT '1.0000'"),
      col('AIName', "VARCHAR(64) NOT NULL DEFAULT ''"),
      col('ScriptName', "VARCHAR(64) NOT NULL DEFAULT ''"),
      col('VerifiedBuild', 'INT NULL')
    ],
    primaryKey: ['entry'],
    indexes: [{ name: 'idx_name', columns: ['name'], unique: false }],
    rows: [
      [23486, 'Driz Tumblequick', 'Wolpertinger Handler', 70, 70, 35, 3n, 1, '1.0000', 'SmartAI', '', 12340],
      [23487, 'Wild Wolpertinger', null, 1, 1, 188, 0n, 0.8, '0.2500', 'SmartAI', '', 12340],
      [
        24715,
        'Bartleby Battson',
        'Brewfest Vendor',
        70,
        70,
        35,
        9223372036854775807n,
        1,
        '1.0000',
        '',
        'npc_bartleby_brewfest',
        null
      ],
      [
        24766,
        'Drunken Wolpertinger',
        null,
        1,
        1,
        188,
        0n,
        1.2,
        '123456789.1234',
        'SmartAI',
        'npc_drunken_wolpertinger',
        12340
      ],
      [24767, 'Wolpertinger Pen', 'Containment', 1, 1, 35, 0n, 1, '1.0000', 'SmartAI', '', 12340],
      ...fillerCreatures(3000)
    ]
  },
  {
    name: 'quest_template',
    columns: [
      col('ID', 'MEDIUMINT UNSIGNED NOT NULL'),
      col('QuestType', 'TINYINT UNSIGNED NOT NULL DEFAULT 2'),
      col('MinLevel', 'SMALLINT NOT NULL DEFAULT 0'),
      col('StartItem', 'INT UNSIGNED NOT NULL DEFAULT 0'),
      col('RewardMoney', 'BIGINT NOT NULL DEFAULT 0'),
      col('LogTitle', 'TEXT NULL'),
      col('LogDescription', 'TEXT NULL'),
      col('QuestDescription', 'TEXT NULL'),
      col('RequiredItemId1', 'INT UNSIGNED NOT NULL DEFAULT 0'),
      col('RequiredItemCount1', 'SMALLINT UNSIGNED NOT NULL DEFAULT 0')
    ],
    primaryKey: ['ID'],
    rows: [
      [
        11117,
        2,
        70,
        32907,
        94000,
        'Catch the Wild Wolpertinger!',
        'Use the Wolpertinger Net to catch 5 Wild Wolpertingers and bring them to Driz Tumblequick.',
        'Have you seen them? Wild wolpertingers, all over the place! Take this net, $N, and catch a few for my collection. Drunks see them everywhere, but only a real net holds them.',
        32906,
        5
      ],
      [
        11122,
        2,
        70,
        0,
        -5,
        'There and Back Again',
        'Return the ram to the stable.',
        "Don't let it run off; it's been drinking.\nTwice.",
        0,
        0
      ],
      [11431, 2, 70, 0, 0, 'Now This is Ram Racing... Almost.', null, null, 0, 0]
    ]
  },
  {
    name: 'creature_queststarter',
    columns: [col('id', 'INT UNSIGNED NOT NULL'), col('quest', 'INT UNSIGNED NOT NULL')],
    primaryKey: ['id', 'quest'],
    rows: [
      [23486, 11117],
      [24715, 11122],
      [24715, 11431]
    ]
  },
  {
    name: 'item_template',
    columns: [
      col('entry', 'INT UNSIGNED NOT NULL'),
      col('name', "VARCHAR(255) NOT NULL DEFAULT ''"),
      col('spellid_1', 'INT NOT NULL DEFAULT 0'),
      col('BuyPrice', 'BIGINT NOT NULL DEFAULT 0'),
      col('ScriptName', "VARCHAR(64) NOT NULL DEFAULT ''"),
      col('icon_checksum', 'VARBINARY(16) NULL', 'VARBINARY(16) NULL')
    ],
    primaryKey: ['entry'],
    rows: [
      [32906, 'Wild Wolpertinger', 0, 0, '', null],
      [
        32907,
        'Wolpertinger Net',
        41621,
        0,
        'item_wolpertinger_net',
        new Uint8Array([0x00, 0xff, 0x10, 0x27, 0x5c, 0x27, 0x22, 0x00])
      ],
      [33927, 'Brewfest Pony Keg', 23487, 100000, '', new Uint8Array([1, 2, 3])]
    ]
  },
  {
    name: 'smart_scripts',
    columns: [
      col('entryorguid', 'BIGINT NOT NULL'),
      col('source_type', 'TINYINT UNSIGNED NOT NULL DEFAULT 0'),
      col('id', 'SMALLINT UNSIGNED NOT NULL DEFAULT 0'),
      col('link', 'SMALLINT UNSIGNED NOT NULL DEFAULT 0'),
      col('event_type', 'TINYINT UNSIGNED NOT NULL DEFAULT 0'),
      col('event_param1', 'INT UNSIGNED NOT NULL DEFAULT 0'),
      col('action_type', 'TINYINT UNSIGNED NOT NULL DEFAULT 0'),
      col('action_param1', 'INT UNSIGNED NOT NULL DEFAULT 0'),
      col('target_type', 'TINYINT UNSIGNED NOT NULL DEFAULT 0'),
      col('comment', 'TEXT NOT NULL')
    ],
    primaryKey: ['entryorguid', 'source_type', 'id', 'link'],
    rows: [
      [23487, 0, 0, 0, 8, 41621, 41, 0, 1, 'Wild Wolpertinger - On Spellhit Wolpertinger Net - Despawn'],
      [
        23487,
        0,
        1,
        0,
        8,
        41621,
        56,
        32906,
        7,
        'Wild Wolpertinger - On Spellhit Wolpertinger Net - Add Item Wild Wolpertinger'
      ],
      [24766, 0, 0, 0, 1, 0, 11, 23487, 1, 'Drunken Wolpertinger - Out of Combat - Cast 23487'],
      [23487, 9, 0, 0, 0, 0, 1, 0, 1, 'Actionlist 23487 (source_type 9: not the creature)'],
      [-91001, 0, 0, 0, 25, 0, 45, 1, 1, 'creature guid 91001 - On Reset - Set Data'],
      [23486, 0, 0, 0, 19, 11117, 1, 0, 7, 'Driz Tumblequick - On Quest Accepted - Say Line 0'],
      [23486, 1, 0, 0, 64, 0, 1, 0, 7, 'gameobject 23486 (source_type 1: not the creature)'],
      // a cycle through summons: 24766 summons 24767, which summons 24766
      [24766, 0, 1, 0, 1, 0, 12, 24767, 1, 'Drunken Wolpertinger - Out of Combat - Summon Wolpertinger Pen'],
      [24767, 0, 0, 0, 1, 0, 12, 24766, 1, 'Wolpertinger Pen - Out of Combat - Summon Drunken Wolpertinger']
    ]
  },
  {
    name: 'spell_script_names',
    columns: [col('spell_id', 'INT NOT NULL'), col('ScriptName', 'VARCHAR(64) NOT NULL')],
    primaryKey: ['spell_id', 'ScriptName'],
    rows: [
      [41621, 'spell_wolpertinger_net'],
      [23487, 'spell_gen_pony_keg']
    ]
  },
  {
    name: 'game_event',
    columns: [
      col('eventEntry', 'TINYINT UNSIGNED NOT NULL'),
      col('start_time', 'DATETIME NULL'),
      col('end_time', 'DATETIME NULL'),
      col('occurence', 'BIGINT UNSIGNED NOT NULL DEFAULT 5184000'),
      col('description', 'VARCHAR(255) NULL')
    ],
    primaryKey: ['eventEntry'],
    rows: [
      [24, '2026-09-20 00:01:00', '2026-10-06 23:59:00', 525600n, 'Brewfest'],
      [12, '2026-10-18 01:00:00', '2026-11-01 01:00:00', 525600n, "Hallow's End"],
      [99, null, null, 5184000n, null]
    ]
  },
  {
    // A table that exists but is not on any allowlist: research must never read it.
    name: 'account_secrets',
    columns: [col('id', 'INT UNSIGNED NOT NULL'), col('secret', 'VARCHAR(64) NOT NULL')],
    primaryKey: ['id'],
    rows: [[1, 'never-read-this']]
  }
]

/** Tables the example profiles allow (everything but account_secrets). */
export const ALLOWED_WORLD_TABLES = WORLD_TABLES.map((t) => t.name).filter((n) => n !== 'account_secrets')

const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')

/** A MariaDB/MySQL literal (for fixture loading only; research never builds SQL from text). */
export const mysqlLiteral = (v: SqlValue): string => {
  if (v === null) return 'NULL'
  if (typeof v === 'number' || typeof v === 'bigint') return String(v)
  if (v instanceof Uint8Array) return v.length === 0 ? "''" : `X'${hex(v)}'`
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "''").replace(/\n/g, '\\n')}'`
}

/** SQL that creates `database` with every fixture table and row (MariaDB/MySQL). */
export const mysqlFixtureSql = (database: string): string => {
  const out: string[] = [`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4;`, `USE \`${database}\`;`]
  for (const t of WORLD_TABLES) {
    const cols = t.columns.map((c) => `  \`${c.name}\` ${c.mysql}`)
    cols.push(`  PRIMARY KEY (${t.primaryKey.map((k) => `\`${k}\``).join(', ')})`)
    for (const ix of t.indexes ?? [])
      cols.push(`  ${ix.unique ? 'UNIQUE ' : ''}KEY \`${ix.name}\` (${ix.columns.map((k) => `\`${k}\``).join(', ')})`)
    out.push(
      `DROP TABLE IF EXISTS \`${t.name}\`;`,
      `CREATE TABLE \`${t.name}\` (\n${cols.join(',\n')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;`
    )
    for (let i = 0; i < t.rows.length; i += 500) {
      const batch = t.rows
        .slice(i, i + 500)
        .map((r) => `(${r.map(mysqlLiteral).join(', ')})`)
        .join(',\n')
      out.push(`INSERT INTO \`${t.name}\` VALUES\n${batch};`)
    }
  }
  return `${out.join('\n')}\n`
}

/** Statements that create the fixture in SQLite (values bound by the caller). */
export const sqliteFixtureDdl = (t: FixtureTable): string[] => [
  `CREATE TABLE "${t.name}" (${t.columns.map((c) => `"${c.name}" ${c.sqlite}`).join(', ')}, PRIMARY KEY (${t.primaryKey.map((k) => `"${k}"`).join(', ')}))`,
  ...(t.indexes ?? []).map(
    (ix) =>
      `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX "${ix.name}" ON "${t.name}" (${ix.columns.map((k) => `"${k}"`).join(', ')})`
  )
]
