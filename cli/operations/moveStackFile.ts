/**
 * The stack file of a node that moves to another machine (`npm run node -- move`): its inventory's place fields set to
 * the new machine's, every other line of the file (comments, order, secrets) as it was.
 */
import { isMap, isSeq, parseDocument } from 'yaml';
import { configKey } from '../../core/catalog/defaults';
import { ToolFailure } from '../cli';

/** The new machine of a moving node: the inventory fields that say where it runs (`undefined`: left as they are). */
export interface NewPlace {
  host: string;
  host_key: string;
  port?: number;
  user?: string;
  /** The enode's address; by default the new host (when the old node_ip was the old host, or not given). */
  node_ip?: string;
}

/** The stack file's text with node `name`'s inventory on the new machine. */
export function movedStackFile(text: string, name: string, place: NewPlace): string {
  const document = parseDocument(text);
  const nodes = document.getIn(['config', configKey('nodes')]);
  if (!isSeq(nodes)) throw new ToolFailure(`the stack file has no ${configKey('nodes')} list`);
  const entry = nodes.items.find((item) => isMap(item) && item.get('name') === name);
  if (!isMap(entry) || !isMap(entry.get('inventory'))) {
    throw new ToolFailure(`node ${name} has no inventory in the stack file: only an SSH node moves between machines`);
  }
  const fields: Array<[string, string | number | undefined]> = [
    ['host', place.host],
    ['host_key', place.host_key],
    ['port', place.port],
    ['user', place.user],
    ['node_ip', place.node_ip],
  ];
  for (const [field, value] of fields) {
    if (value !== undefined) entry.setIn(['inventory', field], value);
  }
  return document.toString();
}

/**
 * The stack file's text with SSH node `name` moved into the stack's cluster: `target: kubernetes`, its inventory gone
 * (the file before the move keeps it); its values file (`values/<name>.yml`) is the operator's to write first.
 */
export function movedToClusterStackFile(text: string, name: string): string {
  const document = parseDocument(text);
  const nodes = document.getIn(['config', configKey('nodes')]);
  if (!isSeq(nodes)) throw new ToolFailure(`the stack file has no ${configKey('nodes')} list`);
  const entry = nodes.items.find((item) => isMap(item) && item.get('name') === name);
  if (!isMap(entry) || entry.get('target') !== 'ssh') {
    throw new ToolFailure(
      `node ${name} is not an SSH node in the stack file: only a machine's node moves into a cluster`,
    );
  }
  entry.set('target', 'kubernetes');
  entry.delete('inventory');
  return document.toString();
}
