/**
 * A stack's own nodes reach each other (core/node/stackBootnodes.ts): its writers and validators carry its bootnodes'
 * enodes in config.toml's `bootnodes` after the network's, a bootnode keeps the network's list; the plan's and the
 * preview's rollout text say it, and say when a bootnode's enode is not known before its key is made.
 */
import { parse } from 'smol-toml';
import { NETWORKS } from '../../core/catalog/networks';
import { deriveIdentity } from '../../core/identity/nodeKey';
import { describeNode } from '../../core/node/description';
import { describeStackBootnodes } from '../../core/node/stackBootnodes';
import { FAKE_SSH_KEY, KEY_ONE, loadTestnetStack, sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';

const BOOTNODE_KEY = `0x${'3'.padStart(64, '0')}`;
/** An SSH node entry of `typenode` named `name` on machine 190.51.100.`last`. */
const entry = (name: string, typenode: string, last: number, extra: Record<string, unknown> = {}) => ({
  ...sshValidatorEntry({ host: `190.51.100.${last}`, node_ip: `190.51.100.${last}` }),
  name,
  typenode,
  ...extra,
});
const stack = (nodeKeys: Record<string, string>, bootnode: Record<string, unknown> = {}) => ({
  'lacchain:network': 'open-protestnet',
  'lacchain:nodes': [
    entry('writer', 'writer', 7),
    entry('bootnode', 'bootnode', 8, bootnode),
    entry('validator', 'validator', 9),
  ],
  'lacchain:sshPrivateKey': FAKE_SSH_KEY,
  'lacchain:companions': structuredClone(TEST_COMPANIONS),
  'lacchain:nodeKeys': nodeKeys,
});
const bootnodesOf = (settings: ReturnType<typeof loadTestnetStack>['settings'], name: string) =>
  parse(describeNode(settings.nodes.find((n) => n.name === name)!).files.configToml).bootnodes;
const NETWORK = NETWORKS['open-protestnet'].bootnodes;
const BOOTNODE_ENODE = deriveIdentity(BOOTNODE_KEY, '190.51.100.8', 60606).enode;

describe("a stack's bootnode in its writers' and validators' bootnodes", () => {
  it("writes the bootnode's enode (its imported key) after the network's, for the writer and the validator, not itself", () => {
    const { settings } = loadTestnetStack(stack({ bootnode: BOOTNODE_KEY, validator: KEY_ONE }));
    expect(bootnodesOf(settings, 'writer')).toEqual([...NETWORK.writer, BOOTNODE_ENODE]);
    expect(bootnodesOf(settings, 'validator')).toEqual([...NETWORK.validator, BOOTNODE_ENODE]);
    expect(bootnodesOf(settings, 'bootnode')).toEqual([...NETWORK.bootnode]);
  });

  it("writes it from the bootnode's publicKey (machine custody pinned)", () => {
    const publicKey = deriveIdentity(BOOTNODE_KEY, '190.51.100.8', 60606).publicKey;
    const { settings } = loadTestnetStack(stack({}, { keyCustody: 'machine', publicKey }));
    expect(bootnodesOf(settings, 'writer')).toEqual([...NETWORK.writer, BOOTNODE_ENODE]);
  });

  it('the rollout text of the plan and the preview says which nodes carry it, or why not yet', () => {
    const known = loadTestnetStack(stack({ bootnode: BOOTNODE_KEY }));
    expect(describeStackBootnodes(known.settings.nodes, known.secrets.nodeKeys)).toEqual([
      `bootnode bootnode (${BOOTNODE_ENODE}) in the bootnodes of writer, validator, beside the network's`,
    ]);
    const generated = loadTestnetStack(stack({}));
    expect(bootnodesOf(generated.settings, 'writer')).toEqual([...NETWORK.writer]);
    expect(describeStackBootnodes(generated.settings.nodes, generated.secrets.nodeKeys)).toEqual([
      'bootnode bootnode: its enode is known only once its key is made (keyCustody stack); give its publicKey, or import its key, for writer, validator to carry it in their bootnodes',
    ]);
  });

  it('says nothing for a stack without a bootnode', () => {
    const { settings, secrets } = loadTestnetStack({
      ...stack({}),
      'lacchain:nodes': [entry('writer', 'writer', 7), entry('validator', 'validator', 9)],
    });
    expect(describeStackBootnodes(settings.nodes, secrets.nodeKeys)).toEqual([]);
    expect(bootnodesOf(settings, 'writer')).toEqual([...NETWORK.writer]);
  });
});
