/**
 * `npm run node -- move --new-key` (docs/moving.md), its pure parts: the plan says the old key is never carried and the
 * enode changes; what keeps a node from a new key as its stack stands (an imported key, a pinned one, backups without
 * a password of their own, the stack's key's or the machine's), each one line; and the URNs `pulumi up` replaces for a stack-held key.
 */
import { movePlan, newKeyRefusal, stackKeyUrns } from '../../cli/operations/move';
import type { SshNodeSettings } from '../../core/settings/model';
import { KEY_ONE_PUBLIC, loadTestnet, sshValidatorEntry, sshValidatorStack } from '../../testing/fixtures';

/** The fixture's validator, its fields changed; its key not imported (the secrets are given apart below). */
const validator = (fields: Record<string, unknown> = {}) => {
  const entry = { ...sshValidatorEntry(), ...fields };
  const stack = sshValidatorStack(entry);
  delete stack['lacchain:nodeKeys'];
  return loadTestnet(stack).nodes[0] as SshNodeSettings;
};
const NONE = { nodeKeys: {}, backupPassword: undefined };

describe('a move with a new key', () => {
  it('its plan says the old key is never carried and the enode changes', () => {
    const node = validator();
    const lines = movePlan({ stack: 'testnet', from: node, to: node, newKey: true });
    expect(lines.filter((line) => line.includes('--new-key'))).toEqual([
      '  a new key at the new place (--new-key): the old key is never carried there and stays with the stopped old node, kept from starting; the enode changes: the network must permission the new one (the request is printed at the end)',
    ]);
    expect(movePlan({ stack: 'testnet', from: node, to: node }).some((line) => line.includes('--new-key'))).toBe(false);
  });

  it('a key the stack generated, its backups with a password of their own: nothing keeps it from a new one', () => {
    expect(newKeyRefusal(validator(), { nodeKeys: {}, backupPassword: 'p' })).toBeUndefined();
  });

  it('a key the stack generated, its backups password derived from it: refused, the new key could not open them', () => {
    expect(newKeyRefusal(validator(), NONE)).toBe(
      "--new-key: node validator's backups are encrypted with a password derived from its key, which the new key cannot open: set lacchain:backupPassword to the one in use first (docs/security.md#replacing-a-machines-key, step 1) and run move again",
    );
  });

  it('an imported key, a pinned machine key, a machine key without a backup password: one line each, saying what to do', () => {
    expect(newKeyRefusal(validator(), { nodeKeys: { validator: '[secret]' }, backupPassword: undefined })).toBe(
      "--new-key: node validator's key is imported in the stack file (lacchain:nodeKeys.validator): remove it (pulumi config rm --path 'lacchain:nodeKeys.validator') and run move again, or move without --new-key",
    );
    expect(newKeyRefusal(validator({ keyCustody: 'machine', publicKey: KEY_ONE_PUBLIC }), NONE)).toBe(
      `--new-key: node validator pins its key (publicKey 0x${KEY_ONE_PUBLIC}): remove the pin from the stack file and run move again (pin the new public key after the move)`,
    );
    expect(newKeyRefusal(validator({ keyCustody: 'machine' }), NONE)).toBe(
      "--new-key: node validator's backups are encrypted with a password derived from its key, which the new key cannot open: set lacchain:backupPassword to the one in use first (docs/security.md#replacing-a-machines-key, step 1) and run move again",
    );
    expect(newKeyRefusal(validator({ keyCustody: 'machine' }), { nodeKeys: {}, backupPassword: 'p' })).toBeUndefined();
  });

  it("the URNs replaced for a stack-held key: its node's random bytes only", () => {
    const identity = 'lacchain:index:RemoteNode$lacchain:index:NodeIdentity$random:index/randomBytes:RandomBytes';
    const listed = [
      'Current stack resources (5):',
      `    │  URN: urn:pulumi:testnet::lacchain-besu-node::${identity}::validator-identity-key`,
      `    │  URN: urn:pulumi:testnet::lacchain-besu-node::${identity}::writer-identity-key`,
      '    │  URN: urn:pulumi:testnet::lacchain-besu-node::command:remote:Command::validator-node-key',
    ].join('\n');
    expect(stackKeyUrns(listed, 'validator')).toEqual([
      `urn:pulumi:testnet::lacchain-besu-node::${identity}::validator-identity-key`,
    ]);
    expect(stackKeyUrns(listed, 'rpc')).toEqual([]);
  });
});
