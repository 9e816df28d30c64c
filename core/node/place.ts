/**
 * Where a node runs, as the stack's outputs record it (`nodes.<node>.place`), and whether the stack file moved a node
 * since the last `pulumi up`: such a run would start the node in its new place while it still runs in the old one
 * (two nodes, one key), so it is refused, pointing at `npm run node -- move` (docs/moving.md).
 */
import type { NodeSettings } from '../settings/model';

/** A node's place in one line: an SSH node's machine (login, address, port), a Kubernetes node's namespace. */
export function nodePlace(node: NodeSettings, kubeContext?: string): string {
  return node.target === 'ssh'
    ? `ssh ${node.user}@${node.host}:${node.sshPort}`
    : `kubernetes ${kubeContext ?? 'default'}/${node.namespace}`;
}

/** A node whose place in the stack file is not the one the last `pulumi up` recorded. */
export interface MovedNode {
  node: string;
  from: string;
  to: string;
}

/** The nodes the stack file moved since the last run, from that run's `nodes` output (anything else: none). */
export function movedNodes(previous: unknown, nodes: readonly NodeSettings[], kubeContext?: string): MovedNode[] {
  if (typeof previous !== 'object' || previous === null) return [];
  const recorded = previous as Record<string, { place?: unknown } | undefined>;
  return nodes.flatMap((node) => {
    const from = recorded[node.name]?.place;
    const to = nodePlace(node, kubeContext);
    return typeof from === 'string' && from !== to ? [{ node: node.name, from, to }] : [];
  });
}

/**
 * The refusal of a run that would move nodes without `npm run node -- move`, in one line; none when nothing moved, or
 * when the run is the move's own (it names the node in MOVING_NODE_VARIABLE, once the old node is stopped).
 */
export function moveRefusal(
  stack: string,
  moved: readonly MovedNode[],
  moving: string | undefined,
): string | undefined {
  const others = moved.filter((m) => m.node !== moving);
  if (others.length === 0) return undefined;
  const [first] = others;
  const more =
    others.length > 1
      ? ` (and ${others
          .slice(1)
          .map((m) => `node ${m.node}`)
          .join(', ')})`
      : '';
  return (
    `node ${first.node} changed place in the stack file (${first.from} -> ${first.to})${more}: pulumi up would start it ` +
    `there while it still runs at ${first.from} (two nodes, one key); move it with npm run node -- move --stack ${stack} --node ${first.node}`
  );
}
