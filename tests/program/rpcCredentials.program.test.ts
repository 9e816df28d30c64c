/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * Who can check a guessed RPC password offline: no one without the secret bcrypt salts. The program is declared with
 * the recording engine, whose RandomBytes (the salts) get values chosen per declaration, and every value it declares
 * outside the secrets (each resource's inputs as the offline plan shows them, the stack outputs) is compared between
 * declarations that differ by the password alone, or by the salt alone.
 */
import * as bcrypt from 'bcryptjs';
import * as pulumi from '@pulumi/pulumi';
import { parse as parseToml } from 'smol-toml';
import { BCRYPT_SALT_BYTES } from '../../core/rpc/credentials';
import { deterministicHex, redact, settle, startRecording, unwrapSecrets } from '../../tools/recording/engine';
import { PROGRAM_RESOURCE_TYPES, PROJECT_NAME } from '../../tools/recording/programTypes';
import { declareProgram, Declared } from '../../testing/program';
import { FAKE_SSH_KEY, KEY_ONE, COMPANIONS_OFF, sshValidatorEntry } from '../../testing/fixtures';
import { kubernetesStack } from '../../testing/values';

const RANDOM_BYTES = 'random:index/randomBytes:RandomBytes';
const PASSWORD = 'correct horse battery';
const OTHER_PASSWORD = 'correct horse battery!';

/** What the engine gives the salts in the next declaration: another seed stands for another `pulumi up`'s salts. */
let saltSeed = 'first';
const recorded = startRecording({
  project: PROJECT_NAME,
  stack: 'testnet',
  preview: false,
  knownTypes: PROGRAM_RESOURCE_TYPES,
  outputsFor: (resource) => {
    if (resource.type !== RANDOM_BYTES) return undefined;
    const seed = resource.name.includes('-rpc-salt-') ? `${saltSeed}/${resource.name}` : resource.name;
    const hex = deterministicHex(seed, Number(resource.inputs.length));
    return { hex, base64: Buffer.from(hex, 'hex').toString('base64') };
  },
});

const auth = { method: 'password', users: [{ name: 'alice' }, { name: 'bob', permissions: ['eth:*'] }] };

/** A writer on Kubernetes (RPC kept inside: a pod has no TLS) and a validator over SSH. */
function clusterAndMachine(password: string) {
  const { config, files } = kubernetesStack('testnet', {
    'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }, sshValidatorEntry()],
    'lacchain:sshPrivateKey': FAKE_SSH_KEY,
    // Off: the companions call Besu's RPC without credentials.
    'lacchain:companions': structuredClone(COMPANIONS_OFF),
    'lacchain:rpc': { exposure: 'internal', authentication: auth },
    'lacchain:rpcPasswords': { alice: password, bob: `${password} of bob` },
  });
  return { config, files };
}

/** A writer over SSH with exposure tls-only (its 80 then only redirects to 443). */
function machineWriter(password: string) {
  return {
    config: {
      'lacchain:network': 'open-protestnet',
      'lacchain:nodes': [
        {
          ...sshValidatorEntry({ host: '190.51.100.8', node_ip: '190.51.100.8', node_name: 'org-writer' }),
          name: 'writer',
          typenode: 'writer',
        },
      ],
      'lacchain:sshPrivateKey': FAKE_SSH_KEY,
      'lacchain:companions': structuredClone(COMPANIONS_OFF),
      'lacchain:nodeKeys': { writer: KEY_ONE },
      'lacchain:rpc': { exposure: 'tls-only', authentication: auth },
      'lacchain:rpcPasswords': { alice: password, bob: `${password} of bob` },
    },
    files: {},
  };
}

async function declare(stack: { config: Record<string, unknown>; files: Record<string, unknown> }, seed: string) {
  saltSeed = seed;
  return declareProgram(recorded, 'testnet', stack.config, stack.files);
}

/** Every value outside the secrets, by where it is: `<resource> <path>` or `output <node>.<name>`. */
async function publicValues(declared: Declared): Promise<Map<string, unknown>> {
  const values = new Map<string, unknown>();
  const walk = (prefix: string, value: unknown) => {
    if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) walk(`${prefix}.${key}`, item);
    } else {
      values.set(prefix, value);
    }
  };
  for (const resource of declared.resources) walk(`${resource.name} `, redact(resource.inputs));
  for (const [node, outputs] of Object.entries(declared.outputs.nodes)) {
    for (const [name, output] of Object.entries(outputs)) {
      if (!pulumi.Output.isInstance(output)) continue;
      const settled = await settle(output as pulumi.Output<unknown>);
      if (!settled.secret) walk(`output ${node}.${name}`, settled.value);
    }
  }
  return values;
}

/** The places whose value differs between two declarations. */
function differences(a: Map<string, unknown>, b: Map<string, unknown>): string[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((key) => a.get(key) !== b.get(key)).sort();
}

/** The users' bcrypt hashes a node is given: the Kubernetes Secret, or the node-key step's secret parameter. */
function hashesOf(declared: Declared, node: string): Record<string, string> {
  const secret = declared.resources.find((r) => r.name === `${node}-rpc-auth`);
  let text: string;
  if (secret) {
    text = (unwrapSecrets(secret.inputs) as any).stringData['rpc-credentials.toml'];
  } else {
    const step = declared.resources.find((r) => r.name === `${node}-node-key`)!;
    const stdin = (unwrapSecrets(step.inputs) as any).stdin as string;
    // A plain shell variable of the step, never exported (core/remote/secretParameters.ts).
    const match = /^RPC_CREDENTIALS='((?:[^']|'\\'')*)'$/m.exec(stdin)!;
    text = match[1].replace(/'\\''/g, "'");
  }
  const users = (parseToml(text) as any).Users as Record<string, { password: string }>;
  return Object.fromEntries(Object.entries(users).map(([name, user]) => [name, user.password]));
}

describe.each([
  ['a Kubernetes writer (internal) and an SSH validator', clusterAndMachine, ['writer', 'validator']],
  ['an SSH writer (tls-only)', machineWriter, ['writer']],
])('RPC password hashes of %s', (_name, stack, nodes) => {
  let first: Declared;
  let again: Declared;
  let newPassword: Declared;
  let newSalts: Declared;
  beforeAll(async () => {
    first = await declare(stack(PASSWORD), 'first');
    again = await declare(stack(PASSWORD), 'first');
    newPassword = await declare(stack(OTHER_PASSWORD), 'first');
    newSalts = await declare(stack(PASSWORD), 'second');
    // Four declarations with bcrypt hashes: seconds of CPU each on a loaded 2-core machine.
  }, 120_000);

  it("salts each user's hash with 16 random bytes of its own, a child of the node's component, secret", () => {
    for (const node of nodes) {
      for (const user of ['alice', 'bob']) {
        const salts = first.resources.filter((r) => r.type === RANDOM_BYTES && r.name === `${node}-rpc-salt-${user}`);
        expect(salts).toHaveLength(1);
        expect(salts[0].inputs).toEqual({ length: BCRYPT_SALT_BYTES });
        expect(salts[0].options.parent).toBe(node);
        expect(salts[0].options.additionalSecretOutputs).toEqual(expect.arrayContaining(['hex', 'base64']));
      }
    }
  });

  it('gives different hashes for the same user and password under other salts, the same under the same salt', () => {
    for (const node of nodes) {
      const hashes = hashesOf(first, node);
      expect(bcrypt.compareSync(PASSWORD, hashes.alice)).toBe(true);
      expect(bcrypt.compareSync(`${PASSWORD} of bob`, hashes.bob)).toBe(true);
      expect(hashesOf(again, node)).toEqual(hashes);
      const salted = hashesOf(newSalts, node);
      expect(salted.alice).not.toBe(hashes.alice);
      expect(salted.bob).not.toBe(hashes.bob);
      expect(bcrypt.compareSync(PASSWORD, salted.alice)).toBe(true);
      // Not derived from the user and password: each node has its own salts for the same user and password.
      if (nodes.length > 1) expect(hashesOf(first, nodes[1]).alice).not.toBe(hashesOf(first, nodes[0]).alice);
    }
  });

  it('changes nothing public when nothing changed', async () => {
    expect(differences(await publicValues(first), await publicValues(again))).toEqual([]);
  });

  it('changes no public value with the password alone in a way computable without the salts', async () => {
    const base = await publicValues(first);
    const byPassword = differences(base, await publicValues(newPassword));
    const bySalt = new Set(differences(base, await publicValues(newSalts)));
    // Whatever public moves with the password moves with the salts too: it cannot be recomputed from a guess alone.
    expect(byPassword.filter((place) => !bySalt.has(place))).toEqual([]);
    // Only the pod's checksum annotation (made from the salted hashes) is public and moves; the SSH trigger is secret.
    expect(byPassword).toEqual(
      nodes.includes('writer') && stack === clusterAndMachine
        ? ['writer-node .spec.template.metadata.annotations.lacchain.net/config-checksum']
        : [],
    );
  });

  it('still rolls the pod or runs the node-key step again on a password change', () => {
    const cluster = first.resources.find((r) => r.name === 'writer-node' && r.type.startsWith('kubernetes:'));
    if (cluster) {
      const checksum = (d: Declared) =>
        (d.resources.find((r) => r.name === 'writer-node')!.inputs as any).spec.template.metadata.annotations[
          'lacchain.net/config-checksum'
        ];
      expect(checksum(newPassword)).not.toBe(checksum(first));
      expect(checksum(again)).toBe(checksum(first));
    }
    for (const node of nodes.filter((n) => first.resources.some((r) => r.name === `${n}-node-key`))) {
      const trigger = (d: Declared) =>
        (unwrapSecrets(d.resources.find((r) => r.name === `${node}-node-key`)!.inputs) as any).triggers[0];
      expect(trigger(newPassword)).not.toBe(trigger(first));
      expect(trigger(again)).toBe(trigger(first));
      const step = first.resources.find((r) => r.name === `${node}-node-key`)!;
      expect(redact(step.inputs.triggers)).toBe('[secret]');
    }
  });
});
