/**
 * The settings docs' tables, made from the schema (each setting's meaning, default and rule: settingDoc.ts). The docs
 * hold each table between `<!-- settings-table: <name> -->` and `<!-- /settings-table -->`; `npm run docs` writes
 * them and a unit test fails when a doc and its schema drift apart.
 */
import { z } from 'zod';
import {
  companionsSchema,
  deploySchema,
  inventorySchema,
  rpcSchema,
  stackConfigSchema,
  stackNodeSchema,
  backupsSchema,
  besuOptionsSchema,
  monitoringSchema,
} from './schema';
import { KEY_CUSTODIES, KEY_CUSTODY_FACTS, KeyCustodyFacts } from '../catalog/keyCustody';
import { allowedBy, isOptional, ruleDefault, settingDoc, shapeOf } from './settingDoc';

/** One generated table: where it lives and which settings it lists. */
export interface SettingsTable {
  /** Its name in the markers. */
  name: string;
  /** The doc that holds it, relative to the project. */
  doc: string;
  /** The header of its first column. */
  column: string;
  /** The settings it lists, in order. */
  shape: z.ZodRawShape;
}

/** Every generated table. */
export const SETTINGS_TABLES: readonly SettingsTable[] = [
  { name: 'stack-keys', doc: 'docs/settings.md', column: 'Key', shape: stackConfigSchema.shape },
  { name: 'node-entry', doc: 'docs/settings.md', column: 'Field', shape: stackNodeSchema.shape },
  { name: 'rpc-fields', doc: 'docs/settings.md', column: 'Field', shape: rpcSchema.shape },
  { name: 'backups-fields', doc: 'docs/settings.md', column: 'Field', shape: backupsSchema.shape },
  { name: 'monitoring-fields', doc: 'docs/settings.md', column: 'Field', shape: monitoringSchema.shape },
  { name: 'besu-fields', doc: 'docs/settings.md', column: 'Field', shape: besuOptionsSchema.shape },
  { name: 'values-file', doc: 'docs/settings.md', column: 'Field', shape: deploySchema.shape },
  { name: 'inventory', doc: 'docs/settings.md', column: 'Field', shape: inventorySchema.shape },
  {
    name: 'companion-fields',
    doc: 'docs/companions.md',
    column: 'Field',
    shape: { ...shapeOf(companionsSchema.shape.relaySigner), ...shapeOf(companionsSchema.shape.rotationValidator) },
  },
  {
    name: 'ethstats-fields',
    doc: 'docs/companions.md',
    column: 'Field',
    shape: shapeOf(companionsSchema.shape.ethstats),
  },
];

/** A table cell: one line, its pipes escaped (unless already escaped). */
const cell = (text: string) => text.replace(/\n/g, ' ').replace(/(?<!\\)\|/g, '\\|');

function defaultWords(rule: z.ZodType): string {
  const doc = settingDoc(rule);
  if (doc?.default) return doc.default;
  const value = ruleDefault(rule);
  if (value !== undefined) return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
  return isOptional(rule) ? 'none' : '';
}

function rows(shape: z.ZodRawShape, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([key, field]) => {
    const rule = field as z.ZodType;
    const doc = settingDoc(rule);
    if (!doc) throw new Error(`${prefix}${key}: a setting without its meaning in the schema`);
    if (doc.expand) return rows(shapeOf(rule), `${prefix}${key}.`);
    const name = doc.shownAs ?? `${prefix}${key}`;
    const required = doc.required ?? (isOptional(rule) ? 'no' : 'yes');
    return [
      `| \`${name}\` | ${cell(required)} | ${cell(defaultWords(rule))} | ${cell(doc.description)} | ${cell(allowedBy(rule)).replace(/</g, '&lt;')} |`,
    ];
  });
}

/** The Markdown of one table. */
export function renderSettingsTable(table: SettingsTable): string {
  return [
    `| ${table.column} | Required | Default | Meaning | Allowed |`,
    '|---|---|---|---|---|',
    ...rows(table.shape),
  ].join('\n');
}

const BLOCK = /(<!-- settings-table: ([a-z-]+) -->)[\s\S]*?(<!-- \/settings-table -->)/g;

/** A table made from the catalog's facts rather than the schema, between the same markers. */
export interface FactTable {
  name: string;
  doc: string;
  render: () => string;
}

/** The key custodies side by side (core/catalog/keyCustody.ts), for docs/security.md. */
function keyCustodyTable(): string {
  const columns: [string, keyof KeyCustodyFacts][] = [
    ['Who can read the key', 'readers'],
    ['What the state holds', 'state'],
    ['Lost if the state leaks', 'stateLeak'],
    ['Lost if the machine is lost', 'machineLoss'],
    ['When the enode is known', 'enodeKnown'],
  ];
  return [
    `| \`keyCustody\` | Nodes | Where the key lives | ${columns.map(([header]) => header).join(' | ')} |`,
    `|---|---|---|${columns.map(() => '---|').join('')}`,
    ...KEY_CUSTODIES.map((custody) => {
      const facts = KEY_CUSTODY_FACTS[custody];
      const cells = [facts.targets.join(', '), facts.where, ...columns.map(([, field]) => facts[field] as string)];
      return `| \`${custody}\` | ${cells.map(cell).join(' | ')} |`;
    }),
  ].join('\n');
}

/** Every table made from facts. */
export const FACT_TABLES: readonly FactTable[] = [
  { name: 'key-custody', doc: 'docs/security.md', render: keyCustodyTable },
];

/** The docs holding generated tables. */
export const GENERATED_DOCS: readonly string[] = [...new Set([...SETTINGS_TABLES, ...FACT_TABLES].map((t) => t.doc))];

/** A doc with its generated tables written from the schema (tables it does not hold are left alone). */
export function withSettingsTables(doc: string, text: string): string {
  return text.replace(BLOCK, (whole, open: string, name: string, close: string) => {
    const table = SETTINGS_TABLES.find((t) => t.doc === doc && t.name === name);
    if (table) return `${open}\n${renderSettingsTable(table)}\n${close}`;
    const facts = FACT_TABLES.find((t) => t.doc === doc && t.name === name);
    return facts ? `${open}\n${facts.render()}\n${close}` : whole;
  });
}
