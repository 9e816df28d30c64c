/**
 * `npm run docs`: writes the settings tables of the docs from the schema (core/settings/settingsTables.ts), where a
 * setting's meaning, default and rule live. `npm run docs -- --check` changes nothing and fails when a doc drifts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { SETTINGS_TABLES, withSettingsTables } from '../core/settings/settingsTables';
import { parseOptions, runTool, ToolFailure } from './cli';

const USAGE = 'npm run docs [-- --check]';
const PROJECT = path.resolve(__dirname, '..');

runTool(() => {
  const { values } = parseOptions(process.argv.slice(2), { check: { type: 'boolean' } }, USAGE);
  const drifted: string[] = [];
  for (const doc of [...new Set(SETTINGS_TABLES.map((table) => table.doc))]) {
    const file = path.join(PROJECT, doc);
    const text = fs.readFileSync(file, 'utf8');
    const written = withSettingsTables(doc, text);
    if (written === text) continue;
    drifted.push(doc);
    if (!values.check) fs.writeFileSync(file, written);
  }
  if (values.check && drifted.length > 0) {
    throw new ToolFailure(`${drifted.join(', ')}: the settings tables differ from the schema; run npm run docs`);
  }
  process.stdout.write(drifted.length > 0 ? `wrote ${drifted.join(', ')}\n` : 'the settings tables are up to date\n');
});
