/**
 * Writing the guided setup's answers into the settings files without losing anything already there: comments,
 * other nodes and other keys are kept (the `yaml` library's document model edits in place).
 */
import * as fs from 'fs';
import * as path from 'path';
import { Document, isMap, isSeq, parseDocument, YAMLMap, YAMLSeq } from 'yaml';
import { CONFIG_NAMESPACE } from '../../core/catalog/defaults';

/** A node entry of `lacchain:nodes`. */
export interface StackNodeEntry {
  name: string;
  typenode: string;
  target: 'kubernetes' | 'ssh';
  values?: string;
  inventory?: Record<string, unknown>;
}

function load(file: string, fallback: string): Document {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : fallback;
  const document = parseDocument(text);
  if (document.errors.length > 0) throw new Error(`${file} is not valid YAML: ${document.errors[0].message}`);
  return document;
}

function save(file: string, document: Document): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, document.toString({ lineWidth: 0 }));
}

/** Sets the network and adds or updates one node in `Pulumi.<stack>.yaml`. */
export function writeStackConfig(file: string, network: string, node: StackNodeEntry): void {
  const document = load(file, '');
  if (!isMap(document.get('config'))) document.set('config', document.createNode({}));
  (document.get('config') as YAMLMap).flow = false;
  document.setIn(['config', `${CONFIG_NAMESPACE}:network`], network);
  const nodesKey = ['config', `${CONFIG_NAMESPACE}:nodes`];
  let nodes = document.getIn(nodesKey);
  if (!isSeq(nodes)) {
    document.setIn(nodesKey, document.createNode([]));
    nodes = document.getIn(nodesKey);
  }
  const list = nodes as YAMLSeq;
  list.flow = false;
  const entry = document.createNode(Object.fromEntries(Object.entries(node).filter(([, v]) => v !== undefined)));
  const index = list.items.findIndex((item) => isMap(item) && (item as YAMLMap).get('name') === node.name);
  if (index >= 0) {
    // Keep the entry's own comments and any keys the setup does not manage.
    const existing = list.items[index] as YAMLMap;
    for (const key of ['typenode', 'target', 'values', 'inventory']) existing.delete(key);
    for (const pair of (entry as YAMLMap).items) existing.set(pair.key, pair.value);
  } else {
    list.add(entry);
  }
  save(file, document);
}

/** Writes the `deploy` section fields of a values file, keeping everything else. */
export function writeValuesFile(file: string, deploy: Record<string, unknown>): void {
  const document = load(file, '');
  if (!isMap(document.get('deploy'))) document.set('deploy', document.createNode({}));
  (document.get('deploy') as YAMLMap).flow = false;
  for (const [key, value] of Object.entries(deploy)) {
    const keys = ['deploy', ...key.split('.')];
    if (value === undefined) document.deleteIn(keys);
    else document.setIn(keys, value);
  }
  save(file, document);
}
