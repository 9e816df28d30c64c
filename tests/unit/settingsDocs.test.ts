/**
 * A setting's meaning lives once, in the schema: the docs' settings tables and `npm run init`'s questions are made
 * from it, and this test fails when a doc drifts from the schema (run `npm run docs` to write the tables again).
 */
import * as fs from 'fs';
import * as path from 'path';
import {
  FIELD_HELP_FILE,
  fieldHelpLines,
  KUBERNETES_QUESTIONS,
  NODE_NAME_QUESTION,
  SSH_QUESTIONS,
  questionMeaning,
} from '../../core/init/questions';
import { settingDoc } from '../../core/settings/settingDoc';
import { renderSettingsTable, SETTINGS_TABLES, withSettingsTables } from '../../core/settings/settingsTables';

const PROJECT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(PROJECT, file), 'utf8');

describe('the settings docs are made from the schema', () => {
  it.each(SETTINGS_TABLES.map((t) => [t.name, t.doc, t] as const))(
    '%s in %s is as the schema says',
    (name, doc, table) => {
      const text = read(doc);
      expect(text).toContain(
        `<!-- settings-table: ${name} -->\n${renderSettingsTable(table)}\n<!-- /settings-table -->`,
      );
    },
  );

  it('a table edited by hand is found and written back from the schema', () => {
    const doc = SETTINGS_TABLES[0].doc;
    const text = read(doc);
    const edited = text.replace('The nodes of the stack', 'The machines of the stack');
    expect(edited).not.toBe(text);
    expect(withSettingsTables(doc, edited)).toBe(text);
  });

  it('every row names what is required, the default and what is allowed', () => {
    for (const table of SETTINGS_TABLES) {
      for (const row of renderSettingsTable(table).split('\n').slice(2)) {
        const cells = row
          .split(/(?<!\\)\|/)
          .slice(1, -1)
          .map((c) => c.trim());
        expect(cells).toHaveLength(5);
        expect(cells[1]).not.toBe('');
        expect(cells[3]).not.toBe('');
        expect(cells[4]).not.toBe('');
        if (cells[1] === 'no') expect(cells[2]).not.toBe('');
      }
    }
  });
});

describe("npm run init's questions take their meaning from the schema", () => {
  const questions = [...KUBERNETES_QUESTIONS, ...SSH_QUESTIONS, NODE_NAME_QUESTION];

  it.each(questions.map((q) => [q.key, q] as const))('%s', (_key, question) => {
    const doc = settingDoc(question.schema);
    expect(doc).toBeDefined();
    const meaning = questionMeaning(question);
    expect(meaning).not.toMatch(/`|\]\(/);
    expect(meaning).not.toMatch(/\.$/);
    expect(`${meaning}.`.replace(/\s/g, '')).toBe(
      doc!.description
        .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1')
        .replace(/`|\\/g, '')
        .replace(/\s/g, ''),
    );
  });

  it("every question's flag is in the README's list of flags", () => {
    const readme = read('README.md');
    for (const question of questions) expect(readme).toContain(`\`--${question.flag}\``);
  });
});

describe("init's field flags' help (cli/init/fieldHelp.json, written by npm run docs)", () => {
  it("is each question's key and meaning from the schema, as init asks them", () => {
    const written = JSON.parse(read(FIELD_HELP_FILE)) as Record<string, string>;
    expect(Object.entries(written)).toEqual(Object.entries(fieldHelpLines()));
    expect(written['worker-name']).toMatch(/^workerName: The Kubernetes worker/);
  });
});
