/**
 * The public key a machine holding its own key (machine custody) reports: read from what the node-key step printed
 * (NODE_PUBLIC_KEY_LINE). Nothing else of the key is ever printed.
 */
import { NODE_PUBLIC_KEY_LINE } from '../catalog/keyCustody';
import { parsePublicKey } from '../identity/nodeKey';

/** The public key in a node-key step's output (`0x` + 128 hex); throws when the output holds none. */
export function machinePublicKeyOf(output: string | undefined, node: string): string {
  const keys = (output ?? '')
    .split('\n')
    .filter((line) => line.startsWith(`${NODE_PUBLIC_KEY_LINE} `))
    .map((line) => parsePublicKey(line.slice(NODE_PUBLIC_KEY_LINE.length + 1)));
  const key = keys[keys.length - 1];
  if (key === undefined) {
    throw new Error(
      `node ${node}: the node-key step printed no public key ("${NODE_PUBLIC_KEY_LINE} 0x…"): the machine's key cannot be read back; run pulumi up again, or see docs/security.md#key-custody`,
    );
  }
  return key;
}
