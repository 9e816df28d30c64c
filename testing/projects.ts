/**
 * Project folders for the tests that run the tools as an operator does: a stack file (`Pulumi.testnet.yaml`) and
 * the values files it names, in a temporary folder of their own.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { valuesFor } from './values';

/** Writes a testnet stack config and its files (YAML unless given as text) in a new folder under `parent`. */
export function projectFolder(
  parent: string,
  config: Record<string, unknown>,
  files: Record<string, unknown> = {},
): string {
  const dir = fs.mkdtempSync(path.join(parent, 'project-'));
  fs.writeFileSync(path.join(dir, 'Pulumi.testnet.yaml'), yaml.dump({ config }));
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), typeof content === 'string' ? content : yaml.dump(content));
  }
  return path.join(dir, 'Pulumi.testnet.yaml');
}

/** A testnet stack of one writer on Kubernetes: more stack settings, and fields of its values file's deploy section. */
export function writerProject(
  parent: string,
  options: { config?: Record<string, unknown>; deploy?: Record<string, unknown> } = {},
): string {
  return projectFolder(
    parent,
    {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      ...options.config,
    },
    { 'values/writer.yml': valuesFor('testnet', 'writer', options.deploy ?? {}) },
  );
}
