/**
 * `npm run docs`: writes the settings tables of the docs from the schema (core/settings/settingsTables.ts), where a
 * setting's meaning, default and rule live, and the monitoring files (alert rules, their tests, the dashboard) from
 * the health thresholds (core/monitoring/files.ts), and init's field flags' help (cli/init/fieldHelp.json). `npm run docs -- --check` changes nothing and fails when a file
 * drifts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { runCli, ToolFailure, ToolSpec } from './cli';
import { PROJECT_DIR } from '../core/projectDir';

const SPEC = {
  command: 'npm run --silent docs --',
  usage: '[--check]',
  summary:
    "Writes the settings tables of docs/ and the help of init's field flags from the schema, and the monitoring files\n" +
    'from the health thresholds.',
  options: { check: { type: 'boolean', help: 'change nothing; fail when a file is not as the code writes it' } },
  examples: [
    ['', "rewrite the docs' tables and monitoring/"],
    ['--check', 'what CI runs: fail on a drifted file'],
  ],
} as const satisfies ToolSpec;

runCli(SPEC, async ({ values }) => {
  // Loaded only to do the work (the schema, the health thresholds): --help and a usage error answer at once.
  const { GENERATED_DOCS, withSettingsTables } = await import('../core/settings/settingsTables');
  const { monitoringFiles } = await import('../core/monitoring/files');
  const { FIELD_HELP_FILE, fieldHelpLines } = await import('../core/init/questions');
  const drifted: string[] = [];
  for (const doc of GENERATED_DOCS) {
    const file = path.join(PROJECT_DIR, doc);
    const text = fs.readFileSync(file, 'utf8');
    const written = withSettingsTables(doc, text);
    if (written === text) continue;
    drifted.push(doc);
    if (!values.check) fs.writeFileSync(file, written);
  }
  const fieldHelp = { file: FIELD_HELP_FILE, text: `${JSON.stringify(fieldHelpLines(), null, 2)}\n` };
  for (const { file, text } of [...monitoringFiles(), fieldHelp]) {
    const target = path.join(PROJECT_DIR, file);
    if (fs.existsSync(target) && fs.readFileSync(target, 'utf8') === text) continue;
    drifted.push(file);
    if (!values.check) {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, text);
    }
  }
  if (values.check && drifted.length > 0) {
    throw new ToolFailure(`${drifted.join(', ')}: not as the code writes them; run npm run docs`);
  }
  process.stdout.write(
    drifted.length > 0 ? `wrote ${drifted.join(', ')}\n` : 'the settings tables and monitoring files are up to date\n',
  );
});
