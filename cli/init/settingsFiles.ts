/**
 * Writing the guided setup's answers into the settings files without losing anything already there: comments,
 * other nodes and other keys are kept (the `yaml` library's document model edits in place). Each edit makes the new
 * text first, so the answers are checked with the program's loader before anything is written, and a file is written
 * only when its text changes.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Document, isMap, isScalar, isSeq, parseDocument, YAMLMap, YAMLSeq } from 'yaml';
import { CONFIG_NAMESPACE, defaultValuesFile } from '../../core/catalog/defaults';
import { NODE_TYPES, NodeType } from '../../core/catalog/nodeTypes';

/** A node of `lacchain:nodes` as the stack file lists it. */
export interface StackFileNode {
  /** Its place in the list. */
  index: number;
  name: string;
  typenode?: string;
  target?: string;
  values?: string;
  inventory?: Record<string, unknown>;
  /** Where its key lives, as the entry says (absent: the stack's). */
  keyCustody?: string;
}

/**
 * The node the setup writes: its entry in `lacchain:nodes`. In `inventory`, undefined removes a key; the inventory's
 * other keys are kept while the node stays on the SSH path.
 */
export interface NodeEdit {
  name: string;
  typenode: NodeType;
  target: 'kubernetes' | 'ssh';
  /** The node's values file when the entry names it (left out: `values/<typenode>.yml`). */
  values?: string;
  inventory?: Record<string, unknown>;
  /** `machine` when the node's key is made and kept on its machine (left out: the stack's, the default). */
  keyCustody?: 'machine';
  /** The comment above the entry, saying what the node is and where its settings are. */
  comment: string;
}

function parse(text: string, file: string): Document {
  const document = parseDocument(text);
  if (document.errors.length > 0) throw new Error(`${file} is not valid YAML: ${document.errors[0].message}`);
  return document;
}

/** The text of a file, or undefined when there is none. */
export function readText(file: string): string | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

/** Writes `text` unless the file already holds it; true when it was written. */
export function writeIfChanged(file: string, text: string): boolean {
  if (readText(file) === text) return false;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return true;
}

/** The nodes a stack file lists (none for a file that does not exist or has no list). */
export function stackFileNodes(text: string | undefined, file: string): StackFileNode[] {
  if (text === undefined) return [];
  const nodes = parse(text, file).toJS()?.config?.[`${CONFIG_NAMESPACE}:nodes`];
  if (!Array.isArray(nodes)) return [];
  return nodes
    .map((entry: unknown, index) => ({ entry, index }))
    .filter(
      ({ entry }) => typeof entry === 'object' && entry !== null && typeof (entry as StackFileNode).name === 'string',
    )
    .map(({ entry, index }) => ({ ...(entry as Omit<StackFileNode, 'index'>), index }));
}

/** The values file a Kubernetes node of a stack file reads, as a path relative to the project folder. */
export function valuesFileOf(node: StackFileNode): string | undefined {
  if (node.target !== 'kubernetes') return undefined;
  if (node.values !== undefined) return path.normalize(node.values);
  return (NODE_TYPES as readonly unknown[]).includes(node.typenode)
    ? path.normalize(defaultValuesFile(node.typenode as NodeType))
    : undefined;
}

/**
 * The values files the nodes of every stack file in `dir` read (`Pulumi.*.yaml`), but node `except.name` of the stack
 * file `except.file`: a file one of them reads belongs to that node, and another node must not write it.
 */
export function valuesFilesInUse(dir: string, except?: { file: string; name: string }): Map<string, string> {
  const inUse = new Map<string, string>();
  const stackFiles = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^Pulumi\..+\.ya?ml$/.test(f)) : [];
  for (const name of stackFiles) {
    const file = path.join(dir, name);
    let nodes: StackFileNode[];
    try {
      nodes = stackFileNodes(readText(file), name);
    } catch {
      continue;
    }
    for (const node of nodes) {
      if (except && path.resolve(file) === path.resolve(except.file) && node.name === except.name) continue;
      const values = valuesFileOf(node);
      if (values !== undefined && !inUse.has(values)) inUse.set(values, `node ${node.name} of ${name}`);
    }
  }
  return inUse;
}

/**
 * The values file of a Kubernetes node the setup writes: the one it reads already when no other node reads it (a
 * re-run, or the shipped stacks' `values/<typenode>.yml`); else a file of its own, `values/<name>.yml`, or
 * `values/<stack>-<name>.yml` when that name is taken, so that adding a node never changes another node's settings.
 */
export function valuesFileForNode(
  dir: string,
  stack: string,
  stackFile: string,
  name: string,
  existing: StackFileNode | undefined,
): string {
  const inUse = valuesFilesInUse(dir, { file: stackFile, name });
  const current = existing ? valuesFileOf(existing) : undefined;
  if (current !== undefined && !inUse.has(current)) return current;
  const free = (file: string) => !inUse.has(path.normalize(file)) && !fs.existsSync(path.join(dir, file));
  const candidates = [`values/${name}.yml`, `values/${stack}-${name}.yml`];
  for (let i = 2; ; i++) {
    const found = candidates.find(free);
    if (found) return found;
    candidates.push(`values/${stack}-${name}-${i}.yml`);
  }
}

/** The `deploy` section of a values file (nothing when there is no such file or section). */
export function deploySection(file: string): Record<string, unknown> | undefined {
  const text = readText(file);
  const deploy = text === undefined ? undefined : parse(text, file).toJS()?.deploy;
  return typeof deploy === 'object' && deploy !== null ? deploy : undefined;
}

/** The entries of `lacchain:nodes`, made a block list when there is none. */
function nodeList(document: Document): YAMLSeq {
  if (!isMap(document.get('config'))) document.set('config', document.createNode({}));
  (document.get('config') as YAMLMap).flow = false;
  const key = ['config', `${CONFIG_NAMESPACE}:nodes`];
  if (!isSeq(document.getIn(key))) document.setIn(key, document.createNode([]));
  const list = document.getIn(key) as YAMLSeq;
  list.flow = false;
  keepTrailingCommentAbove(document.get('config') as YAMLMap, `${CONFIG_NAMESPACE}:nodes`);
  return list;
}

/**
 * Moves the comment that ends `config` (the shipped stack file's commented examples, after `lacchain:nodes: []`) above
 * the key `key` when that key's value is the map's last: below a block list, it would read as the last node's, and
 * `pulumi config set --path` puts it inside that node's settings (and adds later keys below it).
 */
function keepTrailingCommentAbove(config: YAMLMap, key: string): void {
  const last = config.items[config.items.length - 1];
  if (!config.comment || !last || !isScalar(last.key) || last.key.value !== key) return;
  last.key.commentBefore = [last.key.commentBefore, config.comment].filter(Boolean).join('\n');
  config.comment = null;
}

/** The text of `Pulumi.<stack>.yaml` without the node named `name` (its comment goes with it); the rest as it was. */
export function stackFileWithout(old: string, file: string, name: string): string {
  const document = parse(old, file);
  const list = nodeList(document);
  const index = list.items.findIndex((item) => isMap(item) && item.get('name') === name);
  if (index >= 0) list.items.splice(index, 1);
  return document.toString();
}

/**
 * The text of `Pulumi.<stack>.yaml` with the network set and one node added, or replaced in place (its entry keeps
 * its place, its own extra keys such as `rpc`, and the inventory keys the setup does not ask while it stays an SSH
 * node); the comment above it is rewritten for what it now is. `header` starts a new file.
 */
export function stackFileText(
  old: string | undefined,
  file: string,
  header: string,
  network: string,
  node: NodeEdit,
  kubeContext?: string,
) {
  const document = parse(old ?? '', file);
  if (old === undefined) document.commentBefore = header;
  if (!isMap(document.get('config'))) document.set('config', document.createNode({}));
  document.setIn(['config', `${CONFIG_NAMESPACE}:network`], network);
  // The cluster the operator named (--context): pulumi up deploys there, not to whatever context is current then.
  if (kubeContext !== undefined) document.setIn(['config', `${CONFIG_NAMESPACE}:kubeContext`], kubeContext);
  const list = nodeList(document);
  const index = list.items.findIndex((item) => isMap(item) && item.get('name') === node.name);
  let entry: YAMLMap;
  if (index >= 0) {
    entry = list.items[index] as YAMLMap;
    const keepInventory = entry.get('target') === 'ssh' && node.target === 'ssh' && isMap(entry.get('inventory'));
    entry.set('typenode', node.typenode);
    entry.set('target', node.target);
    if (node.values === undefined) entry.delete('values');
    else entry.set('values', node.values);
    // Set when asked for; a machine custody the answer leaves is removed (a Secret custody is the operator's edit).
    if (node.keyCustody !== undefined) entry.set('keyCustody', node.keyCustody);
    else if (entry.get('keyCustody') === 'machine') entry.delete('keyCustody');
    if (node.inventory === undefined) entry.delete('inventory');
    else if (!keepInventory) entry.set('inventory', document.createNode(defined(node.inventory)));
    else {
      const inventory = entry.get('inventory') as YAMLMap;
      for (const [key, value] of Object.entries(node.inventory)) {
        if (value === undefined) inventory.delete(key);
        else inventory.set(key, value);
      }
    }
  } else {
    const fields = {
      name: node.name,
      typenode: node.typenode,
      target: node.target,
      keyCustody: node.keyCustody,
      values: node.values,
    };
    entry = document.createNode(defined({ ...fields, inventory: node.inventory && defined(node.inventory) }));
    list.add(entry);
  }
  // The first entry's comment is the list's (the `yaml` library keeps it there).
  const at = index >= 0 ? index : list.items.length - 1;
  if (at === 0) list.commentBefore = node.comment;
  else entry.commentBefore = node.comment;
  return render(document, old === undefined);
}

/**
 * The text of a stack file with one setting of a mapping set (`['lacchain:companions', 'ethstats', 'imageDigest']`,
 * as `pulumi config set --path` writes it), keeping everything else.
 */
export function stackFileWithSetting(old: string, file: string, keys: string[], value: string): string {
  const document = parse(old, file);
  document.setIn(['config', ...keys], value);
  return render(document, false);
}

/** A setting of the stack file's config (`['lacchain:companions', 'ethstats']`), or undefined. */
export function stackFileSetting(text: string | undefined, file: string, keys: string[]): unknown {
  if (text === undefined) return undefined;
  const found = parse(text, file).getIn(['config', ...keys]);
  return isMap(found) || isSeq(found) ? found.toJSON() : found;
}

/**
 * The text of a values file with the `deploy` fields given (dot paths; undefined removes one), keeping everything
 * else. `header` starts a new file.
 */
export function valuesFileText(old: string | undefined, file: string, header: string, deploy: Record<string, unknown>) {
  const document = parse(old ?? '', file);
  if (old === undefined) document.commentBefore = header;
  if (!isMap(document.get('deploy'))) document.set('deploy', document.createNode({}));
  (document.get('deploy') as YAMLMap).flow = false;
  for (const [key, value] of Object.entries(deploy)) {
    const keys = ['deploy', ...key.split('.')];
    if (value === undefined) document.deleteIn(keys);
    else document.setIn(keys, value);
  }
  return render(document, old === undefined);
}

/** A new file's text: its header comment right above its first line, as in the shipped files. */
function render(document: Document, isNew: boolean): string {
  const text = document.toString({ lineWidth: 0 });
  return isNew ? text.replace(/^((?:#[^\n]*\n)+)\n/, '$1') : text;
}

function defined(mapping: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(mapping).filter(([, v]) => v !== undefined));
}
