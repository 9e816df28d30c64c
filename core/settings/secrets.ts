/**
 * The stack's secrets: the SSH private key, imported node keys and RPC passwords. Each is checked without ever being
 * shown; encrypted values the offline plan cannot read are passed on as a marker.
 */
import { configKey } from '../catalog/defaults';
import { KEY_CUSTODY_FACTS } from '../catalog/keyCustody';
import { InvalidNodeKeyError, parsePrivateKey } from '../identity/nodeKey';
import type { NodeSettings, StackSecrets } from './model';
import { Problem } from './problems';
import type { StackConfigInput } from './schema';
import { ENCRYPTED_VALUE } from './sources';
import { S3_REPOSITORY } from './fields';
import { SSH_AUTHENTICATION_KEY, SSH_PRIVATE_KEY_KEY, type SshAuthentication } from '../catalog/sshLogin';

const RPC_KEY = configKey('rpc');

/** Stands for an encrypted SSH key while its shape is checked (the engine checks the real one). */
export const ENCRYPTED_PEM_STAND_IN = `-----BEGIN ${ENCRYPTED_VALUE}`;

/**
 * The secrets of a stack whose other settings are valid. The SSH private key is required when a node is reached over
 * SSH and the stack logs in with it (`privateKey`), unless `sshKeyOptional` (a tool that does not log in with it: the
 * offline plan, `npm run node`); with the agent it is refused, since it would sit in the state unused.
 */
export function readSecrets(
  config: StackConfigInput,
  nodes: NodeSettings[],
  file: string,
  problems: Problem[],
  sshAuthentication: SshAuthentication,
  sshKeyOptional = false,
): StackSecrets {
  const sshKey = SSH_PRIVATE_KEY_KEY;
  const keysKey = configKey('nodeKeys');
  const sshPrivateKey = config[sshKey] === ENCRYPTED_PEM_STAND_IN ? ENCRYPTED_VALUE : config[sshKey];
  const sshNodes = nodes.filter((n) => n.target === 'ssh');
  if (sshNodes.length > 0 && sshAuthentication === 'privateKey' && sshPrivateKey === undefined && !sshKeyOptional) {
    problems.push({
      file,
      key: sshKey,
      given: 'missing',
      allowed: `the SSH private key for node ${sshNodes.map((n) => n.name).join(', ')} (${SSH_AUTHENTICATION_KEY} is privateKey): pulumi config set --secret ${sshKey} < ~/.ssh/id_ed25519, or log in with your ssh agent: pulumi config rm ${SSH_AUTHENTICATION_KEY}`,
    });
  }
  if (sshAuthentication === 'agent' && sshPrivateKey !== undefined) {
    problems.push({
      file,
      key: sshKey,
      given: 'given a key (secret, not shown)',
      allowed: `no stored key when ${SSH_AUTHENTICATION_KEY} is agent (it would sit in the state unused): pulumi config rm ${sshKey}, or set ${SSH_AUTHENTICATION_KEY} to privateKey`,
    });
  }
  const nodeKeys = readNodeKeys(
    config[keysKey] ?? {},
    nodes.map((n) => n.name),
    file,
    problems,
  );
  checkKeysOutsideTheStack(nodes, nodeKeys, file, problems);
  const rpcPasswords = readRpcPasswords(config, file, problems);
  const backupPassword = config[configKey('backupPassword')];
  const inSecrets = nodes.filter((n) => n.keyCustody === 'secret');
  if (backupPassword === undefined && inSecrets.length > 0) {
    problems.push({
      file,
      key: configKey('backupPassword'),
      given: 'missing',
      allowed: `the backup repositories' password, set with --secret: the key of node ${inSecrets.map((n) => n.name).join(', ')} is in your Secret (keyCustody secret), which the program never reads, so no password can be derived from it`,
    });
  }
  const backupS3Keys = readS3Keys(config, nodes, file, problems);
  const metricsToken = config[configKey('metricsToken')];
  return {
    sshPrivateKey,
    nodeKeys,
    ...(Object.keys(rpcPasswords).length > 0 ? { rpcPasswords } : {}),
    ...(backupPassword !== undefined ? { backupPassword } : {}),
    ...(backupS3Keys !== undefined ? { backupS3Keys } : {}),
    ...(metricsToken !== undefined ? { metricsToken } : {}),
  };
}

/**
 * A node whose key lives outside the stack (on its machine, or in the operator's Secret) takes no imported key: the
 * key in the state is exactly what that custody keeps out of it.
 */
function checkKeysOutsideTheStack(
  nodes: NodeSettings[],
  nodeKeys: Record<string, string>,
  file: string,
  problems: Problem[],
): void {
  const keysKey = configKey('nodeKeys');
  for (const node of nodes) {
    if (node.keyCustody === 'stack' || nodeKeys[node.name] === undefined) continue;
    problems.push({
      file,
      key: `${keysKey}.${node.name}`,
      given: 'given a key (secret, not shown)',
      allowed: `no imported key for a node with keyCustody ${node.keyCustody}: its key stays ${KEY_CUSTODY_FACTS[node.keyCustody].where}, never in the state; remove it (pulumi config rm --path '${keysKey}.${node.name}'), or keep keyCustody stack`,
    });
  }
}

/** A map of secrets by name in the stack file: the names it may hold, and what each value must be. */
interface SecretMap {
  /** Its configuration key: `<key>.<name>` is one entry. */
  key: string;
  /** The names it may hold. */
  names: readonly string[];
  /** How an entry of another name is refused: what it was given, what is allowed instead. */
  unknownName: { given: string; allowed: string };
  /** What a value may be, said when one is refused. */
  allowedValue: string;
  /** The value to keep, or why it is refused (`is not a text`). */
  parse(value: unknown): { value: string } | { problem: string };
}

/**
 * The entries of a secret map: one of a name it may not hold is refused, an encrypted value (the offline plan's
 * marker) passed on, any other parsed; a refused value is never shown.
 */
function readSecretMap(
  given: Record<string, unknown>,
  map: SecretMap,
  file: string,
  problems: Problem[],
): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const key = `${map.key}.${name}`;
    if (!map.names.includes(name)) {
      problems.push({ file, key, ...map.unknownName });
      continue;
    }
    if (value === ENCRYPTED_VALUE) {
      secrets[name] = value;
      continue;
    }
    const parsed = map.parse(value);
    if ('problem' in parsed) {
      problems.push({
        file,
        key,
        given: `given a value that ${parsed.problem} (secret, not shown)`,
        allowed: map.allowedValue,
      });
      continue;
    }
    secrets[name] = parsed.value;
  }
  return secrets;
}

/** Validates imported node keys: each names a node of the stack and is a valid private key. */
export function readNodeKeys(
  given: Record<string, unknown>,
  nodeNames: string[],
  file: string,
  problems: Problem[],
): Record<string, string> {
  const names = [...new Set(nodeNames)];
  const map: SecretMap = {
    key: configKey('nodeKeys'),
    names,
    unknownName: {
      given: 'given a key for a node that is not in the stack',
      allowed: `a node name of this stack: ${names.join(', ')}`,
    },
    allowedValue: 'a secp256k1 private key: 64 hex digits, optionally 0x, nonzero and below the curve order',
    parse(value) {
      try {
        if (typeof value !== 'string') throw new InvalidNodeKeyError('is not a text');
        return { value: parsePrivateKey(value) };
      } catch (error) {
        if (!(error instanceof InvalidNodeKeyError)) throw error;
        return { problem: error.message };
      }
    },
  };
  return readSecretMap(given, map, file, problems);
}

/** RPC passwords: one per password user, never shown. */
function readRpcPasswords(config: StackConfigInput, file: string, problems: Problem[]): Record<string, string> {
  const passwordsKey = configKey('rpcPasswords');
  const given: Record<string, unknown> = config[passwordsKey] ?? {};
  const auth = config[RPC_KEY]?.authentication;
  const users = auth?.method === 'password' ? (auth.users ?? []).map((u) => u.name) : [];
  const map: SecretMap = {
    key: passwordsKey,
    names: users,
    unknownName: {
      given: 'given a password for a user that is not an RPC user',
      allowed:
        users.length > 0
          ? `a user of ${RPC_KEY}.authentication.users: ${users.join(', ')}`
          : `no passwords unless ${RPC_KEY}.authentication.method is password`,
    },
    allowedValue: 'a password of 12 characters to 72 bytes, set with --secret',
    parse(value) {
      const problem =
        typeof value !== 'string'
          ? 'is not a text'
          : value.length < 12
            ? 'is shorter than 12 characters'
            : Buffer.byteLength(value) > 72
              ? 'is longer than 72 bytes (bcrypt reads no further)'
              : undefined;
      return problem ? { problem } : { value: value as string };
    },
  };
  const passwords = readSecretMap(given, map, file, problems);
  for (const name of users) {
    if (!(name in given)) {
      problems.push({
        file,
        key: `${passwordsKey}.${name}`,
        given: 'missing',
        allowed: `the password of RPC user ${name}: pulumi config set --secret --path '${passwordsKey}.${name}' <password>`,
      });
    }
  }
  return passwords;
}

/** An S3 repository's keys: required with an `s3:` repository, refused without one. */
function readS3Keys(config: StackConfigInput, nodes: NodeSettings[], file: string, problems: Problem[]) {
  const key = configKey('backupS3Keys');
  const keys = config[key];
  const s3 = nodes.filter((n) => n.target === 'ssh' && S3_REPOSITORY.test(n.backups.repository));
  if (s3.length > 0 && keys === undefined) {
    problems.push({
      file,
      key,
      given: 'missing',
      allowed: `the keys of the S3 repository of node ${s3.map((n) => n.name).join(', ')}: pulumi config set --secret --path '${key}.accessKeyId' … and '${key}.secretAccessKey' …`,
    });
  }
  if (s3.length === 0 && keys !== undefined) {
    problems.push({
      file,
      key,
      given: 'given S3 keys (secret, not shown)',
      allowed: `no S3 keys unless ${configKey('backups')}.repository is an s3: repository`,
    });
  }
  return keys;
}
