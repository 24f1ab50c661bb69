/**
 * Script files laid out as in an AzerothCore-family core, for the demo core, the tests and the
 * prompt benchmark. They reproduce what source.context meets on a real core when it is asked for
 * the number 23487: a spell constant `SPELL_SEPARATION_ANXIETY = 23487` in Garr's script, another
 * constant with the same name (21094) in Majordomo's, the wild wolpertinger's number on line 1039
 * of a long brewfest script, central script loaders that declare and call every registration
 * function, and SQL dumps under data/sql/ full of the same number. Deterministic text.
 */

const BOSSES = [
  'boss_lucifron',
  'boss_magmadar',
  'boss_gehennas',
  'boss_garr',
  'boss_baron_geddon',
  'boss_shazzrah',
  'boss_golemagg',
  'boss_sulfuron_harbinger',
  'boss_majordomo',
  'boss_ragnaros',
  'instance_molten_core',
  'boss_onyxia',
  'boss_hakkar',
  'boss_jeklik',
  'boss_venoxis',
  'boss_marli',
  'boss_mandokir',
  'boss_thekal',
  'boss_arlokk',
  'boss_jindo',
  'boss_gahzranka',
  'boss_grilek',
  'boss_hazzarah',
  'boss_renataki',
  'boss_wushoolay',
  'instance_zulgurub',
  'boss_razorgore',
  'boss_vaelastrasz',
  'boss_broodlord',
  'boss_firemaw',
  'boss_ebonroc',
  'boss_flamegor',
  'boss_chromaggus',
  'boss_nefarian',
  'instance_blackwing_lair',
  'boss_drakkisath',
  'boss_gyth',
  'boss_halycon',
  'boss_highlord_omokk',
  'boss_mother_smolderweb',
  'boss_overlord_wyrmthalak',
  'boss_pyroguard_emberseer',
  'boss_quartermaster_zigris',
  'boss_rend_blackhand',
  'boss_gizrul_the_slavener',
  'boss_urok_doomhowl',
  'instance_blackrock_spire',
  'boss_ambassador_flamelash',
  'boss_draganthaurissan',
  'boss_general_angerforge',
  'boss_gorosh_the_dervish',
  'boss_grizzle',
  'boss_high_interrogator_gerstahn',
  'boss_magmus',
  'boss_moira_bronzebeard',
  'boss_tomb_of_seven',
  'instance_blackrock_depths'
]

const SPELL_NAMES = [
  'ram_racing_trot',
  'ram_racing_canter',
  'ram_racing_gallop',
  'ram_fatigue',
  'apple_trap',
  'exhausted_ram',
  'relay_race_turn_in',
  'dark_iron_attack',
  'mole_machine_emerge',
  'bartender_throw_mug',
  'mug_transform',
  'brewfest_toss_mug',
  'cheer_on',
  'fill_keg',
  'keg_marker',
  'ram_fatigue_reduce',
  'synthebrew_goggles',
  'brewfest_hop',
  'direbrew_disarm',
  'direbrew_summon_mole',
  'coren_mug',
  'ilsa_mug',
  'ursula_mug',
  'brewfest_sample',
  'pink_elekk',
  'dark_brewmaiden_stun',
  'giddyup',
  'ram_trot',
  'ram_canter',
  'ram_gallop',
  'throw_keg',
  'catch_keg',
  'drunken_stupor',
  'brew_of_the_month',
  'mug_spin',
  'barker_bunny',
  'brewfest_banner',
  'brewfest_decoration',
  'festive_fireworks',
  'corrupted_brew',
  'bark_for_drohn',
  'bark_for_tchali',
  'bark_for_voodoo',
  'bark_for_bubbles',
  'bark_for_thunderbrew',
  'bark_for_gordok',
  'bark_for_barleybrew',
  'brewfest_mount_transform',
  'brewfest_mount_speed',
  'brewfest_dwarf',
  'brewfest_goblin',
  'brewfest_sampler_aura',
  'brewfest_drink_aura',
  'brewfest_fall',
  'brewfest_relay'
]

const spellScript = (name: string, i: number): string[] => [
  `// ${42000 + i * 7} - ${name
    .split('_')
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join(' ')}`,
  `class spell_brewfest_${name} : public SpellScript`,
  '{',
  `    PrepareSpellScript(spell_brewfest_${name});`,
  '',
  '    void HandleDummy(SpellEffIndex /*effIndex*/)',
  '    {',
  '        if (Unit* target = GetHitUnit())',
  `            target->CastSpell(target, SPELL_BREWFEST_${name.toUpperCase()}, true);`,
  '    }',
  '',
  '    void Register() override',
  '    {',
  `        OnEffectHitTarget += SpellEffectFn(spell_brewfest_${name}::HandleDummy, EFFECT_0, SPELL_EFFECT_DUMMY);`,
  '    }',
  '};',
  ''
]

/** The line of brewfest.cpp that holds the wild wolpertinger's number (as on the real core). */
export const BREWFEST_HIT_LINE = 1039

const WOLPERTINGER_NET = [
  '// 41621 - Wolpertinger Net',
  'class spell_brewfest_wolpertinger_net : public SpellScript',
  '{',
  '    PrepareSpellScript(spell_brewfest_wolpertinger_net);',
  '',
  '    SpellCastResult CheckTarget()',
  '    {',
  '        Unit* target = GetExplTargetUnit();',
  '        if (!target || target->GetEntry() != 23487) // Wild Wolpertinger',
  '            return SPELL_FAILED_BAD_TARGETS;',
  '        return SPELL_CAST_OK;',
  '    }',
  '',
  '    void HandleDummy(SpellEffIndex /*effIndex*/)',
  '    {',
  '        // the creature despawns here; the item reward is left to its SmartAI',
  '        if (Creature* wolpertinger = GetHitCreature())',
  '            wolpertinger->DespawnOrUnsummon();',
  '    }',
  '',
  '    void Register() override',
  '    {',
  '        OnCheckCast += SpellCheckCastFn(spell_brewfest_wolpertinger_net::CheckTarget);',
  '        OnEffectHitTarget += SpellEffectFn(spell_brewfest_wolpertinger_net::HandleDummy, EFFECT_0, SPELL_EFFECT_DUMMY);',
  '    }',
  '};',
  ''
]

const brewfest = (): string => {
  const lines = [
    '/*',
    ' * This file is part of the demo core. Brewfest event scripts.',
    ' */',
    '',
    '#include "ScriptMgr.h"',
    '#include "SpellScript.h"',
    ''
  ]
  let i = 0
  // spell scripts until the wolpertinger's net lands with its number on BREWFEST_HIT_LINE
  const netHit = WOLPERTINGER_NET.findIndex((l) => l.includes('23487'))
  while (lines.length + 17 <= BREWFEST_HIT_LINE - 1 - netHit)
    lines.push(
      ...spellScript(SPELL_NAMES[i % SPELL_NAMES.length] ?? 'x', i++).map((l) =>
        l.replace(/spell_brewfest_(\w+)/g, `spell_brewfest_$1_${Math.floor(i / SPELL_NAMES.length)}`)
      )
    )
  while (lines.length < BREWFEST_HIT_LINE - 1 - netHit) lines.push('')
  lines.push(...WOLPERTINGER_NET)
  const tail = ['apple_trap', 'dark_iron_attack', 'direbrew_disarm'].flatMap((n) => spellScript(`${n}_late`, i++))
  lines.push(...tail)
  lines.push('void AddSC_event_brewfest_scripts()', '{', '    RegisterSpellScript(spell_brewfest_wolpertinger_net);')
  for (let k = 0; k < 24; k++) lines.push(`    RegisterSpellScript(spell_brewfest_${SPELL_NAMES[k] ?? 'x'}_0);`)
  lines.push('}', '')
  return lines.join('\n')
}

const garr = `/*
 * This file is part of the demo core. Molten Core: Garr.
 */

#include "ScriptMgr.h"
#include "molten_core.h"

enum Spells
{
    // Garr
    SPELL_ANTIMAGIC_PULSE           = 19492,
    SPELL_MAGMA_SHACKLES            = 19496,
    SPELL_ENRAGE                    = 19516,

    // Firesworn
    SPELL_ERUPTION                  = 19497,
    SPELL_IMMOLATE                  = 15733,
    SPELL_SEPARATION_ANXIETY        = 23487,
};

struct boss_garr : public BossAI
{
    boss_garr(Creature* creature) : BossAI(creature, DATA_GARR) { }

    void JustEngagedWith(Unit* /*who*/) override
    {
        events.ScheduleEvent(EVENT_ANTIMAGIC_PULSE, 25s);
        events.ScheduleEvent(EVENT_MAGMA_SHACKLES, 15s);
    }
};

struct npc_firesworn : public ScriptedAI
{
    npc_firesworn(Creature* creature) : ScriptedAI(creature) { }

    void UpdateAI(uint32 diff) override
    {
        if (!UpdateVictim())
            return;

        // Firesworn too far from Garr become anxious and hit harder
        if (Creature* garr = me->FindNearestCreature(NPC_GARR, 20.0f))
            me->RemoveAurasDueToSpell(SPELL_SEPARATION_ANXIETY);
        else if (!me->HasAura(SPELL_SEPARATION_ANXIETY))
            DoCastSelf(SPELL_SEPARATION_ANXIETY, true);

        DoMeleeAttackIfReady();
    }
};

void AddSC_boss_garr()
{
    RegisterMoltenCoreCreatureAI(boss_garr);
    RegisterMoltenCoreCreatureAI(npc_firesworn);
}
`

const majordomo = `/*
 * This file is part of the demo core. Molten Core: Majordomo Executus.
 */

#include "ScriptMgr.h"
#include "molten_core.h"

enum Spells
{
    SPELL_SUMMON_RAGNAROS           = 19774,
    SPELL_BLAST_WAVE                = 20229,
    SPELL_TELEPORT                  = 20618,
    SPELL_MAGIC_REFLECTION          = 20619,
    SPELL_AEGIS_OF_RAGNAROS         = 20620,
    SPELL_DAMAGE_REFLECTION         = 21075,
    SPELL_SEPARATION_ANXIETY        = 21094,
};

struct boss_majordomo : public BossAI
{
    boss_majordomo(Creature* creature) : BossAI(creature, DATA_MAJORDOMO_EXECUTUS) { }

    void JustEngagedWith(Unit* /*who*/) override
    {
        DoCastSelf(SPELL_AEGIS_OF_RAGNAROS, true);
        events.ScheduleEvent(EVENT_MAGIC_REFLECTION, 30s);
    }

    void JustSummoned(Creature* summon) override
    {
        summon->CastSpell(summon, SPELL_SEPARATION_ANXIETY, true);
    }
};

void AddSC_boss_majordomo()
{
    RegisterMoltenCoreCreatureAI(boss_majordomo);
}
`

const loader = (fn: string, names: readonly string[]): string => {
  const lines = [
    '/*',
    ' * This file is part of the demo core. It is generated: one declaration and one call per script file.',
    ' */',
    '',
    "// This is where scripts' loading functions should be declared:"
  ]
  for (const n of names) lines.push(`void AddSC_${n}();`)
  lines.push(
    '',
    '// The name of this function should match:',
    `// void Add\${NameOfDirectory}Scripts()`,
    `void ${fn}()`,
    '{'
  )
  for (const n of names) lines.push(`    AddSC_${n}();`)
  lines.push('}', '')
  return lines.join('\n')
}

const dump = (table: string, columns: readonly string[], rows: readonly string[]): string =>
  [
    `-- DB update of ${table} (a data dump, not code)`,
    `DELETE FROM \`${table}\` WHERE \`${columns[0] ?? 'id'}\` IN (23487, 23486, 21094);`,
    `INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES`,
    ...rows.map((r, i) => `(${r})${i === rows.length - 1 ? ';' : ','}`),
    ''
  ].join('\n')

/** The files, by path. */
export const CORE_SCRIPT_FILES: Readonly<Record<string, string>> = {
  'src/server/scripts/Events/brewfest.cpp': brewfest(),
  'src/server/scripts/Events/events_script_loader.cpp': loader('AddEventsScripts', [
    'event_brewfest_scripts',
    'event_hallows_end_scripts',
    'event_midsummer_scripts',
    'event_pilgrims_bounty_scripts',
    'event_winter_veil_scripts'
  ]),
  'src/server/scripts/EasternKingdoms/MoltenCore/boss_garr.cpp': garr,
  'src/server/scripts/EasternKingdoms/MoltenCore/boss_majordomo_executus.cpp': majordomo,
  'src/server/scripts/EasternKingdoms/eastern_kingdoms_script_loader.cpp': loader('AddEasternKingdomsScripts', BOSSES),
  'data/sql/base/db_world/creature_template.sql': dump(
    'creature_template',
    ['entry', 'name', 'subname', 'AIName', 'ScriptName'],
    [
      "23486, 'Driz Tumblequick', 'Wolpertinger Handler', 'SmartAI', ''",
      "23487, 'Wild Wolpertinger', NULL, 'SmartAI', ''",
      "23488, 'Wolpertinger Net Bunny', NULL, '', ''"
    ]
  ),
  'data/sql/base/db_world/smart_scripts.sql': dump(
    'smart_scripts',
    ['entryorguid', 'source_type', 'id', 'event_type', 'event_param1', 'action_type', 'action_param1', 'comment'],
    Array.from(
      { length: 14 },
      (_, i) =>
        `23487, 0, ${i}, 8, 41621, ${i % 2 === 0 ? 56 : 41}, ${i % 2 === 0 ? 32906 : 0}, 'Wild Wolpertinger - On Spellhit - ${i % 2 === 0 ? 'Add Item' : 'Despawn'} (${i})'`
    )
  ),
  'data/sql/base/db_world/spell_script_names.sql': dump(
    'spell_script_names',
    ['spell_id', 'ScriptName'],
    [
      "41621, 'spell_brewfest_wolpertinger_net'",
      "23487, 'spell_separation_anxiety'",
      "21094, 'spell_separation_anxiety'"
    ]
  ),
  'data/sql/updates/db_world/2026_11_01_00.sql': dump(
    'creature_loot_template',
    ['Entry', 'Item', 'Chance', 'Comment'],
    ["23487, 32906, 100, 'Wild Wolpertinger - Wild Wolpertinger'", "23487, 23487, 0, 'placeholder row 23487'"]
  )
}
