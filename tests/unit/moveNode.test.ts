/**
 * The pure parts of `npm run node -- move` (docs/moving.md): the stack file rewritten for the new machine (every other
 * line kept), the plan (a validator's says it never runs in two places), the line a cut move ends with, the
 * re-permissioning request, and what `check` says of a moved node the network has not permissioned at its new enode.
 */
import * as yaml from 'js-yaml';
import { movedStackFile } from '../../cli/operations/moveStackFile';
import { moveCutLine, movePlan } from '../../cli/operations/move';
import { repermissioningRequest } from '../../cli/operations/moveShared';
import { MOVE_STEPS, MoveStep } from '../../core/catalog/move';
import { permissioningVerdicts } from '../../core/operations/causes';
import type { SshNodeSettings } from '../../core/settings/model';
import {
  FAKE_HOST_KEY,
  FIXES,
  KEY_ONE_ADDRESS,
  KEY_ONE_PUBLIC,
  loadTestnet,
  sshValidatorEntry,
  sshValidatorStack,
} from '../../testing/fixtures';

const NEW_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAnotherMachineHostKey000000000000000000000';
const STACK_FILE = `# the operator's own comment
config:
  lacchain:network: open-protestnet
  lacchain:nodes:
    - name: validator # kept
      typenode: validator
      target: ssh
      inventory:
        host: 190.51.100.7
        host_key: ${FAKE_HOST_KEY}
        node_ip: 190.51.100.7
        node_name: org-validator
        node_email: ops@example.org
`;

const validatorOn = (inventory: Record<string, unknown> = {}) =>
  loadTestnet(sshValidatorStack(sshValidatorEntry(inventory))).nodes[0] as SshNodeSettings;

describe('the stack file of a moved node', () => {
  it('names the new machine and keeps every other line', () => {
    const text = movedStackFile(STACK_FILE, 'validator', {
      host: '190.51.100.9',
      host_key: NEW_KEY,
      node_ip: '190.51.100.9',
    });
    expect(text).toContain("# the operator's own comment");
    expect(text).toContain('- name: validator # kept');
    const inventory = (yaml.load(text) as { config: Record<string, Array<{ inventory: Record<string, unknown> }>> })
      .config['lacchain:nodes'][0].inventory;
    expect(inventory).toMatchObject({
      host: '190.51.100.9',
      host_key: NEW_KEY,
      node_ip: '190.51.100.9',
      node_name: 'org-validator',
    });
    expect(inventory.port).toBeUndefined();
  });

  it('refuses a node the file does not hold', () => {
    expect(() => movedStackFile(STACK_FILE, 'writer', { host: '190.51.100.9', host_key: NEW_KEY })).toThrow(
      'node writer has no inventory in the stack file',
    );
  });
});

describe("a move's plan and its cut lines", () => {
  const from = validatorOn();
  const to = validatorOn({ host: '190.51.100.9', node_ip: '190.51.100.9' });

  it("a validator's plan says it never runs in two places, and that its enode changes", () => {
    const plan = movePlan({ stack: 'testnet', from, to }).join('\n');
    expect(plan).toContain(
      'moves from operator@190.51.100.7:22 to operator@190.51.100.9:22'.replace(/operator/g, from.user),
    );
    expect(plan).toContain('node validator is a validator: its key signs blocks, so it is never running in two places');
    expect(plan).toContain("the enode's address changes (190.51.100.7:60606 -> 190.51.100.9:60606)");
    for (const step of Object.values(MOVE_STEPS)) expect(plan).toContain(step);
  });

  it('a writer keeping its address: no validator line, no enode line', () => {
    const writer = { ...from, name: 'writer', typenode: 'writer' } as SshNodeSettings;
    const plan = movePlan({ stack: 'testnet', from: writer, to: { ...writer, host: '10.0.0.9' } }).join('\n');
    expect(plan).not.toContain('validator');
    expect(plan).not.toContain("enode's address changes");
  });

  it('every step cut says which place runs and how to go on', () => {
    for (const step of Object.keys(MOVE_STEPS) as MoveStep[]) {
      const line = moveCutLine('testnet', 'validator', step);
      expect(line).toContain(MOVE_STEPS[step]);
      expect(line).toMatch(/npm run node -- move --stack testnet --node validator/);
    }
    expect(moveCutLine('testnet', 'validator', 'carry')).toContain('the old node is stopped and kept from starting');
    expect(moveCutLine('testnet', 'validator', 'removeOld')).toContain('the new node runs');
  });
});

describe('the re-permissioning request of a moved node', () => {
  const to = validatorOn({ host: '190.51.100.9', node_ip: '190.51.100.9' });
  const before = `enode://${KEY_ONE_PUBLIC}@190.51.100.7:60606`;
  const after = `enode://${KEY_ONE_PUBLIC}@190.51.100.9:60606`;

  it('names the enode to remove, the one to add, the address, the network and where to send it', () => {
    const request = repermissioningRequest(to, before, after);
    expect(request).toMatchObject({
      removeEnode: before,
      enode: after,
      address: KEY_ONE_ADDRESS,
      network: 'open-protestnet',
      nodeType: 'validator',
      nodeName: 'org-validator',
    });
    expect(request.procedure).toContain('tech.support@lac-net.net');
  });

  it('check says a moved node is not yet permissioned at its new enode, not that it has no peers', () => {
    const head = { block: 12, allowed: 0, of: 2 };
    const observations = { peers: 0, syncing: false, enodeIp: '190.51.100.9', permissioning: { head } };
    const [plain] = permissioningVerdicts(observations, FIXES);
    expect(plain.detail).toBe(
      "not yet permissioned (at block 12, allowed to connect to 0 of the network's 2 bootnodes)",
    );
    const [moved] = permissioningVerdicts({ ...observations, moved: { from: before, to: after } }, FIXES);
    expect(moved).toMatchObject({ check: 'permissioning', ok: false });
    expect(moved.detail).toContain(`not yet permissioned at its new enode: the node moved here from ${before}`);
    expect(moved.fix).toContain(`remove ${before}, add ${after}`);
  });
});
