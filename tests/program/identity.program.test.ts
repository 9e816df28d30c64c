/**
 * The node identity inside the program, under the recording engine: the key is generated once or imported, it is
 * secret, and the public identity and permissioning request are outputs.
 */
import * as pulumi from '@pulumi/pulumi';
import { deriveIdentity, privateKeyFromRandomHex } from '../../core/identity/nodeKey';
import { deterministicHex, settle, unwrapSecrets, isWrappedSecret } from '../../tools/recording/engine';
import { flush, recordProgram } from '../../testing/pulumi';
import {
  KEY_ONE,
  KEY_ONE_ADDRESS,
  KEY_ONE_PUBLIC,
  loadTestnetStack,
  testGenesisText,
  validTestnetConfig,
} from '../../testing/fixtures';

const resources = recordProgram();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { declareStack } = require('../../program') as typeof import('../../program');

function declare(config = validTestnetConfig()) {
  const loaded = loadTestnetStack(config);
  return declareStack(
    loaded.settings,
    {
      sshPrivateKey: pulumi.secret(loaded.secrets.sshPrivateKey ?? ''),
      nodeKeys: Object.fromEntries(Object.entries(loaded.secrets.nodeKeys).map(([n, k]) => [n, pulumi.secret(k)])),
    },
    { genesis: () => testGenesisText() },
  );
}

describe('node identity in the program', () => {
  const config = validTestnetConfig();
  config['lacchain:nodeKeys'] = { validator: KEY_ONE };
  const outputs = declare(config);

  it('generates the writer key once from 32 random bytes, as a secret', async () => {
    await flush();
    const random = resources.filter(
      (r) => r.type === 'random:index/randomBytes:RandomBytes' && r.name.endsWith('-identity-key'),
    );
    expect(random.map((r) => [r.name, r.inputs])).toEqual([['writer-identity-key', { length: 32 }]]);
    const expectedKey = privateKeyFromRandomHex(deterministicHex('writer-identity-key', 32));
    const expected = deriveIdentity(expectedKey, '190.113.0.10', 60606);
    const enode = await settle(outputs.nodes.writer.enode);
    expect(enode).toEqual({ known: true, value: expected.enode, secret: false });
    expect(await settle(outputs.nodes.writer.address)).toEqual({ known: true, value: expected.address, secret: false });
  });

  it('keeps an imported key: no random material, the published identity of key 1', async () => {
    expect(resources.some((r) => r.name === 'validator-identity-key')).toBe(false);
    expect((await settle(outputs.nodes.validator.enode)).value).toBe(`enode://${KEY_ONE_PUBLIC}@190.51.100.7:60606`);
    expect((await settle(outputs.nodes.validator.address)).value).toBe(KEY_ONE_ADDRESS);
    expect((await settle(outputs.nodes.validator.publicKey)).value).toBe(`0x${KEY_ONE_PUBLIC}`);
  });

  it('exports a permissioning request per node', async () => {
    const request = await settle(outputs.nodes.validator.permissioningRequest);
    expect(request.secret).toBe(false);
    expect(request.value).toEqual({
      network: 'open-protestnet',
      networkId: 648540,
      nodeType: 'validator',
      nodeName: 'org-validator',
      email: 'ops@example.org',
      enode: `enode://${KEY_ONE_PUBLIC}@190.51.100.7:60606`,
      address: KEY_ONE_ADDRESS,
      procedure: expect.stringMatching(/e-mail the signed agreement form/),
    });
  });

  it('never puts a private key into a component input or an output', async () => {
    await flush();
    const components = resources.filter((r) => r.type.startsWith('lacchain:'));
    const seen = JSON.stringify(components.map((r) => unwrapSecrets(r.inputs)));
    expect(seen).not.toContain(KEY_ONE.slice(2));
    const all = JSON.stringify(
      await Promise.all(Object.values(outputs.nodes).flatMap((n) => [settle(n.enode), settle(n.permissioningRequest)])),
    );
    expect(all).not.toContain(KEY_ONE.slice(2));
  });

  it('marks the random key material secret in the engine', async () => {
    // The random resource's hex output is declared secret (additionalSecretOutputs); the identity's privateKey too.
    const { NodeIdentity } = await import('../../components/nodeIdentity');
    const identity = new NodeIdentity('probe', { p2pHost: '190.113.0.99', p2pPort: 60606 });
    expect((await settle(identity.privateKey!)).secret).toBe(true);
    expect((await settle(identity.enode)).secret).toBe(false);
    expect(isWrappedSecret({ '4dabf18193072939515e22adb298388d': '1b47061264138c4ac30d75fd1eb44270', value: 1 })).toBe(
      true,
    );
  });
});
