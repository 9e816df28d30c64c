/**
 * Settings validation: each bad input gets exactly the message that names the file, the key, the value given and
 * what is allowed; good settings load into the model.
 */
import { generateKeyPairSync } from 'crypto';
import * as yaml from 'js-yaml';
import { nonPublicIpv4Range } from '../../core/settings/fields';
import { loadStack } from '../../core/settings/load';
import { Problem, SettingsError } from '../../core/settings/problems';
import { CONFIG_KEY_KINDS, SECRET_CONFIG_KEYS, stackConfigSchema } from '../../core/settings/schema';
import {
  FAKE_HOST_KEY,
  FAKE_SSH_KEY,
  KEY_ONE,
  memoryFiles,
  rawConfig,
  TEST_COMPANIONS,
  validTestnetConfig,
  validWriterValues,
} from '../../testing/fixtures';
import { itAnswers } from '../../testing/answers';

type Config = Record<string, unknown>;
const JWT_PUBLIC_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();
type Values = { deploy: Record<string, unknown> & { p2p: Record<string, unknown> } };
/* eslint-disable @typescript-eslint/no-explicit-any */
const nodes = (c: Config) => c['lacchain:nodes'] as any[];
const inventory = (c: Config) => nodes(c)[1].inventory as Record<string, unknown>;
/**
 * The relay signer and the rotation client off: they call Besu's HTTP RPC without credentials, so authentication needs
 * them off (the monitoring client reads the WebSocket only, and stays).
 */
const withoutCompanions = (c: Config) =>
  (c['lacchain:companions'] = {
    relaySigner: { enabled: false },
    rotationValidator: { enabled: false },
    ethstats: { ...TEST_COMPANIONS.ethstats },
  });
const companions = (c: Config) => c['lacchain:companions'] as Record<string, Record<string, unknown>>;

const STACK = 'Pulumi.testnet.yaml';
const VALUES = 'values/writer.yml';

function load(
  config: Config,
  values: unknown = validWriterValues(),
  extraFiles: Record<string, string> = {},
  asWritten = false,
) {
  const files = { [VALUES]: typeof values === 'string' ? values : yaml.dump(values), ...extraFiles };
  return loadStack('testnet', rawConfig(config, STACK, { asWritten }), memoryFiles(files));
}

function problemsOf(
  config: Config,
  values?: unknown,
  extraFiles?: Record<string, string>,
  asWritten = false,
): Problem[] {
  try {
    load(config, values, extraFiles, asWritten);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  throw new Error('expected the settings to be refused');
}

interface Case {
  name: string;
  config?: (c: Config) => void;
  values?: (v: Values) => void;
  rawValues?: string;
  /** Keep the secrets as written (plain unless `{ secure }`), instead of as set with --secret. */
  asWritten?: boolean;
  expected: { file?: string; key?: string | RegExp; given?: string | RegExp; allowed: string | RegExp };
}

const cases: Case[] = [
  // Stack config: network and structure.
  {
    name: 'network missing',
    config: (c) => delete c['lacchain:network'],
    expected: { file: STACK, key: 'lacchain:network', given: 'missing', allowed: /non-empty text/ },
  },
  {
    name: 'unknown network',
    config: (c) => (c['lacchain:network'] = 'moonnet'),
    expected: { key: 'lacchain:network', given: 'given "moonnet"', allowed: /open-protestnet for stack testnet/ },
  },
  {
    name: 'deprecated network',
    config: (c) => (c['lacchain:network'] = 'legacy-protestnet'),
    expected: { key: 'lacchain:network', given: 'given "legacy-protestnet"', allowed: /deprecated/ },
  },
  {
    name: 'network of the other stack',
    config: (c) => (c['lacchain:network'] = 'mainnet-omega'),
    expected: { key: 'lacchain:network', allowed: /stack testnet deploys to open-protestnet/ },
  },
  {
    // The engine hands every top-level value over as text: a YAML number arrives as "5".
    name: 'network given as a number',
    config: (c) => (c['lacchain:network'] = 5),
    expected: { key: 'lacchain:network', given: 'given "5"', allowed: /^open-protestnet for stack testnet/ },
  },
  {
    name: 'key deletion switch not true or false',
    config: (c) => (c['lacchain:allowKeyDeletion'] = 'yes'),
    expected: { key: 'lacchain:allowKeyDeletion', given: 'given "yes"', allowed: 'true or false' },
  },
  {
    // What `pulumi config set lacchain:nodes '[{oops'` hands the program: a text that is not JSON.
    name: 'nodes given as text that is not JSON',
    config: (c) => (c['lacchain:nodes'] = '[{oops'),
    expected: { key: 'lacchain:nodes', given: 'given "[{oops"', allowed: 'a list of nodes' },
  },
  {
    name: 'rpc given as a list',
    config: (c) => (c['lacchain:rpc'] = ['public']),
    expected: { key: 'lacchain:rpc', given: 'given ["public"]', allowed: /^a mapping with the fields apis, exposure/ },
  },
  // RPC authentication: logins and tokens never cross a reachable port in plain text (one message per combination).
  {
    name: 'RPC password authentication with exposure public',
    config: (c) => {
      withoutCompanions(c);
      c['lacchain:rpc'] = { authentication: { method: 'password', users: [{ name: 'alice' }] } };
      c['lacchain:rpcPasswords'] = { alice: 'correct horse battery' };
    },
    expected: {
      key: 'lacchain:rpc.exposure',
      given: 'given "public"',
      allowed:
        /^internal while lacchain:rpc\.authentication is on, so logins and tokens never cross the network in plain text \(with exposure public, plain HTTP reaches node writer: 4545 and 80\); a Kubernetes pod has no TLS: keep its RPC internal and put your own TLS ingress in front of it$/,
    },
  },
  {
    name: 'RPC jwt authentication with exposure public',
    config: (c) => {
      withoutCompanions(c);
      c['lacchain:rpc'] = { authentication: { method: 'jwt', publicKey: JWT_PUBLIC_KEY } };
    },
    expected: { key: 'lacchain:rpc.exposure', given: 'given "public"', allowed: /^internal while .*4545/ },
  },
  {
    name: "RPC authentication with exposure tls-only and a Kubernetes writer (the Service's 80)",
    config: (c) => {
      withoutCompanions(c);
      c['lacchain:rpc'] = { exposure: 'tls-only', authentication: { method: 'password', users: [{ name: 'alice' }] } };
      c['lacchain:rpcPasswords'] = { alice: 'correct horse battery' };
    },
    expected: {
      key: 'lacchain:rpc.exposure',
      given: 'given "tls-only"',
      allowed:
        /^internal while .*\(with exposure tls-only, plain HTTP reaches node writer: 80\); a Kubernetes pod has no TLS/,
    },
  },
  {
    name: 'RPC authentication with exposure public on SSH nodes only',
    config: (c) => {
      withoutCompanions(c);
      c['lacchain:nodes'] = [nodes(c)[1]];
      c['lacchain:rpc'] = {
        exposure: 'public',
        authentication: { method: 'password', users: [{ name: 'alice' }] },
      };
      c['lacchain:rpcPasswords'] = { alice: 'correct horse battery' };
    },
    expected: {
      key: 'lacchain:rpc.exposure',
      given: 'given "public"',
      allowed: /^tls-only or internal while .*node validator: 4545\); tls-only serves the RPC over TLS on 443;/,
    },
  },
  // The network's companion services.
  {
    name: 'relay hub contract not an address',
    config: (c) => (companions(c).relaySigner.relayHubContract = '0x1234'),
    expected: {
      key: 'lacchain:companions.relaySigner.relayHubContract',
      given: 'given "0x1234"',
      allowed: 'a contract address: 0x followed by 40 hex digits',
    },
  },
  {
    name: 'rotation client version not x.y.z',
    config: (c) => (companions(c).rotationValidator.version = 'v1.0'),
    expected: {
      key: 'lacchain:companions.rotationValidator.version',
      given: 'given "v1.0"',
      allowed: 'a version x.y.z such as 1.0.1',
    },
  },
  {
    name: 'relay signer release URL not https',
    config: (c) => (companions(c).relaySigner.releaseUrl = 'http://mirror.example.org/gas-relay-signer'),
    expected: { key: 'lacchain:companions.relaySigner.releaseUrl', allowed: /^an https: URL/ },
  },
  {
    name: 'companion image not an image reference',
    config: (c) => (companions(c).relaySigner.image = 'Relay Signer:latest'),
    expected: { key: 'lacchain:companions.relaySigner.image', allowed: /^a container image/ },
  },
  {
    name: 'unknown companion',
    config: (c) => (companions(c).ethstat = { enabled: true }),
    expected: { key: 'lacchain:companions.ethstat', given: 'unknown field', allowed: /relaySigner, rotationValidator/ },
  },
  {
    name: 'ethstats server that is not a server address',
    config: (c) => (companions(c).ethstats.serverUrl = 'ftp://34.138.63.51:3000'),
    expected: { key: 'lacchain:companions.ethstats.serverUrl', allowed: /^a server address such as http:/ },
  },
  {
    name: 'ethstats server with a quote in it',
    config: (c) => (companions(c).ethstats.serverUrl = 'http://stats.example.org/"x'),
    expected: { key: 'lacchain:companions.ethstats.serverUrl', allowed: /^a server address/ },
  },
  {
    name: 'ethstats image digest that is not one',
    config: (c) => (companions(c).ethstats.imageDigest = 'c3'.repeat(32)),
    expected: { key: 'lacchain:companions.ethstats.imageDigest', allowed: /^an image digest: sha256:/ },
  },
  {
    name: 'relay signer image digest that is not one',
    config: (c) => (companions(c).relaySigner.imageDigest = 'lacnetnetworks/relay-signer-lacchain:1.0.2'),
    expected: { key: 'lacchain:companions.relaySigner.imageDigest', allowed: /^an image digest: sha256:/ },
  },
  {
    name: 'rotation client image digest in upper case',
    config: (c) => (companions(c).rotationValidator.imageDigest = `sha256:${'AB'.repeat(32)}`),
    expected: { key: 'lacchain:companions.rotationValidator.imageDigest', allowed: /^an image digest: sha256:/ },
  },
  {
    name: 'ethstats on a node whose name the monitoring server does not register',
    config: (c) => (inventory(c).node_name = 'org.validator'),
    expected: {
      key: 'lacchain:companions.ethstats.enabled',
      given: "on for node validator (org.validator), whose name the network's ethstats server does not register",
      allowed: /^node names of 3 to 64 letters, digits, hyphens and underscores/,
    },
  },
  {
    name: "rotation client on an SSH node from the operator's own URL, without the executable digest",
    config: (c) => {
      delete companions(c).rotationValidator.sha256;
      companions(c).rotationValidator.releaseUrl = 'https://mirror.example.org/rotation-client';
    },
    expected: {
      key: 'lacchain:companions.rotationValidator.sha256',
      given: 'missing',
      allowed:
        /^the SHA-256 of the executable at https:\/\/mirror\.example\.org\/rotation-client.*which SSH node validator installs; or enabled: false; or release 1\.0\.0 from the catalog's URL \(no releaseUrl\), which the catalog pins by its git blob id$/,
    },
  },
  {
    name: 'relay signer on an SSH writer, of a release the catalog does not pin, without the executable digest',
    config: (c) => {
      nodes(c)[1].typenode = 'writer';
      companions(c).relaySigner = { version: '1.0.2' };
    },
    expected: {
      key: 'lacchain:companions.relaySigner.sha256',
      given: 'missing',
      allowed:
        /^the SHA-256 of the executable at https:\/\/raw\.githubusercontent\.com\/LACNetNetworks\/gas-management\/v1\.0\.2\/gas-relay-signer .*which SSH node validator installs; or enabled: false; or release 1\.0\.1 from the catalog's URL \(no releaseUrl\), which the catalog pins by its git blob id$/,
    },
  },
  {
    name: "relay signer on an SSH writer, the catalog's release from another URL, without the executable digest",
    config: (c) => {
      nodes(c)[1].typenode = 'writer';
      companions(c).relaySigner = { releaseUrl: 'https://mirror.example.org/gas-relay-signer-{version}' };
    },
    expected: {
      key: 'lacchain:companions.relaySigner.sha256',
      given: 'missing',
      allowed: /^the SHA-256 of the executable at https:\/\/mirror\.example\.org\/gas-relay-signer-1\.0\.1 /,
    },
  },
  {
    name: 'companions on while the RPC needs credentials',
    config: (c) => {
      c['lacchain:rpc'] = { exposure: 'internal', authentication: { method: 'password', users: [{ name: 'alice' }] } };
      c['lacchain:rpcPasswords'] = { alice: 'correct horse battery' };
      companions(c).rotationValidator.enabled = false;
    },
    expected: {
      key: 'lacchain:companions.relaySigner.enabled',
      given: 'on for node writer',
      allowed:
        /^enabled: false while the node's rpc\.authentication is on: the relay-signer calls Besu's RPC without credentials$/,
    },
  },
  {
    name: 'rotation client on a validator without the IBFT API',
    config: (c) => {
      c['lacchain:rpc'] = { apis: ['ETH', 'NET'] };
      companions(c).relaySigner.enabled = false;
    },
    expected: {
      key: 'lacchain:companions.rotationValidator.enabled',
      given: 'on for node validator, whose RPC lacks IBFT',
      allowed: /ibft_proposeValidatorVote/,
    },
  },
  {
    name: 'unknown stack setting',
    config: (c) => (c['lacchain:nodez'] = []),
    expected: { key: 'lacchain:nodez', given: 'unknown field', allowed: /lacchain:nodes/ },
  },
  {
    name: 'nodes missing',
    config: (c) => delete c['lacchain:nodes'],
    expected: { key: 'lacchain:nodes', given: 'missing', allowed: /list of nodes/ },
  },
  {
    name: 'nodes empty',
    config: (c) => (c['lacchain:nodes'] = []),
    expected: { key: 'lacchain:nodes', given: 'given []', allowed: /at least one node/ },
  },
  {
    name: 'nodes not a list',
    config: (c) => (c['lacchain:nodes'] = { writer: {} }),
    expected: { key: 'lacchain:nodes', allowed: /list of nodes/ },
  },
  {
    name: 'node not a mapping',
    config: (c) => (nodes(c)[0] = 'writer'),
    expected: { key: 'lacchain:nodes[0]', given: 'given "writer"', allowed: /mapping with the fields name, typenode/ },
  },
  // Stack config: one node.
  {
    name: 'node name missing',
    config: (c) => delete nodes(c)[0].name,
    expected: { key: 'lacchain:nodes[0].name', given: 'missing', allowed: /lowercase letters/ },
  },
  {
    name: 'node name with capitals',
    config: (c) => (nodes(c)[0].name = 'Writer'),
    expected: { key: 'lacchain:nodes[0].name', given: 'given "Writer"', allowed: /lowercase/ },
  },
  {
    name: 'node name too long',
    config: (c) => (nodes(c)[0].name = 'w'.repeat(41)),
    expected: { key: 'lacchain:nodes[0].name', allowed: /at most 40/ },
  },
  {
    name: 'duplicate node names',
    config: (c) => (nodes(c)[1].name = 'writer'),
    expected: { key: 'lacchain:nodes[1].name', allowed: /already used by lacchain:nodes\[0\]/ },
  },
  {
    name: 'typenode misspelt',
    config: (c) => (nodes(c)[0].typenode = 'writter'),
    expected: {
      key: 'lacchain:nodes[0].typenode',
      given: 'given "writter"',
      allowed: 'one of writer, validator, bootnode',
    },
  },
  {
    name: 'typenode as menu index',
    config: (c) => (nodes(c)[0].typenode = 2),
    expected: { key: 'lacchain:nodes[0].typenode', given: 'given 2', allowed: 'one of writer, validator, bootnode' },
  },
  {
    name: 'target unknown',
    config: (c) => (nodes(c)[0].target = 'docker'),
    expected: { key: 'lacchain:nodes[0].target', given: 'given "docker"', allowed: 'kubernetes or ssh' },
  },
  {
    name: 'unknown node field',
    config: (c) => (nodes(c)[0].replicas = 2),
    expected: {
      key: 'lacchain:nodes[0].replicas',
      given: 'unknown field',
      allowed: /name, typenode, target, values, inventory/,
    },
  },
  {
    name: 'kubernetes node with an inventory',
    config: (c) => (nodes(c)[0].inventory = inventory(c)),
    expected: { key: 'lacchain:nodes[0].inventory', allowed: /no inventory for a kubernetes node/ },
  },
  {
    name: 'ssh node with a values file',
    config: (c) => (nodes(c)[1].values = 'values/validator.yml'),
    expected: { key: 'lacchain:nodes[1].values', allowed: /no values file for an ssh node/ },
  },
  {
    name: 'ssh node without inventory',
    config: (c) => delete nodes(c)[1].inventory,
    expected: { key: 'lacchain:nodes[1].inventory', given: 'missing', allowed: /host, node_ip, node_name, node_email/ },
  },
  // Inventory of an SSH node.
  {
    name: 'os a system the preflight step refuses',
    config: (c) => (inventory(c).os = 'ubuntu 14.04'),
    expected: {
      key: 'lacchain:nodes[1].inventory.os',
      given: 'given "ubuntu 14.04"',
      allowed:
        /one the preflight step accepts: ubuntu 16\.04, .*; debian 10, 11, 12, 13; rhel, rocky or almalinux 9, 10/,
    },
  },
  {
    name: 'os not <ID> <VERSION_ID>',
    config: (c) => (inventory(c).os = 'Ubuntu 24.04 LTS'),
    expected: {
      key: 'lacchain:nodes[1].inventory.os',
      given: 'given "Ubuntu 24.04 LTS"',
      allowed: /such as "ubuntu 24.04"/,
    },
  },
  {
    name: 'os a system that refuses a writer',
    config: (c) => {
      nodes(c)[1].typenode = 'writer';
      inventory(c).os = 'rocky 9.6';
    },
    expected: {
      key: 'lacchain:nodes[1].inventory.os',
      given: 'given "rocky 9.6" for a writer',
      allowed: /a writer is refused .*Lua module for nginx/,
    },
  },
  {
    name: 'node_ip not an IP',
    config: (c) => (inventory(c).node_ip = '300.1.2.3'),
    expected: { key: 'lacchain:nodes[1].inventory.node_ip', given: 'given "300.1.2.3"', allowed: /IPv4 address/ },
  },
  {
    name: 'node_ip loopback',
    config: (c) => (inventory(c).node_ip = '127.0.0.1'),
    expected: { key: 'lacchain:nodes[1].inventory.node_ip', allowed: /not 0.0.0.0, loopback/ },
  },
  {
    name: 'node_ip unspecified',
    config: (c) => (inventory(c).node_ip = '0.0.0.0'),
    expected: { key: 'lacchain:nodes[1].inventory.node_ip', given: 'given "0.0.0.0"', allowed: /IPv4/ },
  },
  {
    name: 'node_ip multicast',
    config: (c) => (inventory(c).node_ip = '239.1.1.1'),
    expected: { key: 'lacchain:nodes[1].inventory.node_ip', allowed: /multicast/ },
  },
  {
    name: 'node_ip missing',
    config: (c) => delete inventory(c).node_ip,
    expected: { key: 'lacchain:nodes[1].inventory.node_ip', given: 'missing', allowed: /IPv4/ },
  },
  {
    name: 'host not an address',
    config: (c) => (inventory(c).host = 'my host!'),
    expected: {
      key: 'lacchain:nodes[1].inventory.host',
      given: 'given "my host!"',
      allowed: /IPv4 address or a DNS name/,
    },
  },
  {
    name: 'node_email not an e-mail',
    config: (c) => (inventory(c).node_email = 'ops-at-example.org'),
    expected: {
      key: 'lacchain:nodes[1].inventory.node_email',
      given: 'given "ops-at-example.org"',
      allowed: /e-mail address/,
    },
  },
  {
    name: 'node_name with spaces',
    config: (c) => (inventory(c).node_name = 'my node'),
    expected: { key: 'lacchain:nodes[1].inventory.node_name', allowed: /letters, digits, dots/ },
  },
  {
    name: 'release version not x.y.z',
    config: (c) => (inventory(c).node_release_version = '23.4'),
    expected: {
      key: 'lacchain:nodes[1].inventory.node_release_version',
      given: 'given "23.4"',
      allowed: /<major>.<minor>.<patch>/,
    },
  },
  {
    name: 'release version without permissioning',
    config: (c) => (inventory(c).node_release_version = '25.6.0'),
    expected: { key: 'lacchain:nodes[1].inventory.node_release_version', allowed: /not including, 25.6.0/ },
  },
  {
    name: 'release version too old',
    config: (c) => (inventory(c).node_release_version = '1.2.0'),
    expected: { key: 'lacchain:nodes[1].inventory.node_release_version', allowed: /from 1.3.6/ },
  },
  {
    name: 'release version as a YAML number',
    config: (c) => (inventory(c).node_release_version = 23.4),
    expected: { key: 'lacchain:nodes[1].inventory.node_release_version', given: 'given 23.4', allowed: /Besu release/ },
  },
  {
    name: 'ssh port out of range',
    config: (c) => (inventory(c).port = 70000),
    expected: {
      key: 'lacchain:nodes[1].inventory.port',
      given: 'given 70000',
      allowed: 'a whole number from 1 to 65535',
    },
  },
  {
    name: 'ssh port not whole',
    config: (c) => (inventory(c).port = 22.5),
    expected: { key: 'lacchain:nodes[1].inventory.port', allowed: 'a whole number from 1 to 65535' },
  },
  {
    name: 'remote user invalid',
    config: (c) => (inventory(c).user = 'Admin User'),
    expected: { key: 'lacchain:nodes[1].inventory.user', allowed: /Unix user name/ },
  },
  // Node homes in or on the system's folders, and services named as the machine's own.
  ...(
    [
      ['node_home the root folder', '/'],
      ['node_home under /etc', '/etc/lacchain'],
      ['node_home not normalised', '/opt/../etc/lacchain'],
      ['node_home in a home folder', '/home/ubuntu/lacchain'],
      ['node_home in /tmp', '/tmp/lacchain'],
      ['node_home with a trailing slash', '/opt/lacchain/'],
      ['node_home a shared top folder', '/opt'],
    ] as const
  ).map(([name, home]): Case => ({
    name,
    config: (c) => (inventory(c).node_home = home),
    expected: {
      key: 'lacchain:nodes[1].inventory.node_home',
      given: `given "${home}"`,
      allowed: /outside the system folders/,
    },
  })),
  ...(
    [
      ['node_service sshd', 'sshd'],
      ['node_service nginx', 'nginx'],
      ['node_service systemd-journald', 'systemd-journald'],
      // Services a deny-list of the machine's own missed: only the project's own form is taken.
      ['node_service nftables', 'nftables'],
      ['node_service apparmor', 'apparmor'],
      ['node_service podman', 'podman'],
      ['node_service atd', 'atd'],
      ['node_service besu with an empty word', 'besu--validator'],
      ['node_service besu with a trailing hyphen', 'besu-'],
      ['node_service besu_validator', 'besu_validator'],
      ['node_service longer than 32 characters', `besu-${'v'.repeat(28)}`],
    ] as const
  ).map(([name, service]): Case => ({
    name,
    config: (c) => (inventory(c).node_service = service),
    expected: {
      key: 'lacchain:nodes[1].inventory.node_service',
      given: `given "${service}"`,
      allowed:
        "a systemd service name of the project's own form, which no system service has: besu, or besu-<label> such as besu-validator (<label>: lowercase letters and digits, words joined by single hyphens), at most 32 characters",
    },
  })),
  {
    name: "node_service another node's companion unit on the machine",
    config: (c) =>
      nodes(c).push({
        ...nodes(c)[1],
        name: 'second',
        typenode: 'bootnode',
        inventory: {
          ...inventory(c),
          node_ip: '190.51.100.9',
          node_home: '/srv/second',
          node_service: 'besu-ethstats',
        },
      }),
    expected: {
      key: 'node second inventory.node_service',
      given: 'given "besu-ethstats"',
      allowed:
        'a service name whose units (besu-ethstats, besu-ethstats-relay-signer, besu-ethstats-rotation-validator, besu-ethstats-ethstats) no other node on 190.51.100.7 uses (node validator uses it)',
    },
  },
  {
    name: "node_service whose companion unit is another node's service on the machine",
    config: (c) => {
      inventory(c).node_service = 'besu-rotation-validator';
      nodes(c).push({
        ...nodes(c)[1],
        name: 'second',
        typenode: 'bootnode',
        inventory: { ...inventory(c), node_ip: '190.51.100.9', node_home: '/srv/second', node_service: 'besu' },
      });
    },
    expected: {
      key: 'node second inventory.node_service',
      given: 'given "besu"',
      allowed: /no other node on 190\.51\.100\.7 uses \(node validator uses besu-rotation-validator\)$/,
    },
  },
  ...(
    [
      ["node_home inside another node's data/", '/opt/lacchain', '/opt/lacchain/data/second', '/opt/lacchain'],
      ["node_home inside another node's home", '/opt/lacchain', '/opt/lacchain/second', '/opt/lacchain'],
      ["node_home holding another node's home", '/srv/lacchain/validator', '/srv/lacchain', '/srv/lacchain/validator'],
    ] as const
  ).map(([name, first, second, used]): Case => ({
    name,
    config: (c) => {
      inventory(c).node_home = first;
      nodes(c).push({
        ...nodes(c)[1],
        name: 'second',
        typenode: 'bootnode',
        inventory: { ...inventory(c), node_ip: '190.51.100.9', node_home: second, node_service: 'besu-second' },
      });
    },
    expected: {
      key: 'node second inventory.node_home',
      given: `given "${second}"`,
      allowed: `a node home that is not, nor holds, nor lies inside, the home of another node on 190.51.100.7 (node validator uses ${used})`,
    },
  })),
  {
    name: 'two nodes on one machine with one service name',
    config: (c) =>
      nodes(c).push({
        ...nodes(c)[1],
        name: 'second',
        typenode: 'bootnode',
        inventory: { ...inventory(c), node_ip: '190.51.100.9', node_home: '/srv/second' },
      }),
    expected: {
      key: 'node second inventory.node_service',
      given: 'given "besu"',
      allowed:
        'a service name whose units (besu, besu-relay-signer, besu-rotation-validator, besu-ethstats) no other node on 190.51.100.7 uses (node validator uses it)',
    },
  },
  {
    name: 'node_home relative',
    config: (c) => (inventory(c).node_home = 'lacchain'),
    expected: {
      key: 'lacchain:nodes[1].inventory.node_home',
      given: 'given "lacchain"',
      allowed: /absolute, normalised path/,
    },
  },
  {
    name: 'release_url without {version}',
    config: (c) => (inventory(c).release_url = 'https://mirror.example.org/besu.tar.gz'),
    expected: { key: 'lacchain:nodes[1].inventory.release_url', allowed: /holding \{version\}/ },
  },
  {
    name: 'release_url over plain http',
    config: (c) => (inventory(c).release_url = 'http://mirror.example.org/besu-{version}.tar.gz'),
    expected: { key: 'lacchain:nodes[1].inventory.release_url', allowed: /https: URL .* \(no http:\)/ },
  },
  {
    name: 'release_url a relative file path',
    config: (c) => (inventory(c).release_url = 'file:besu-{version}.tar.gz'),
    expected: { key: 'lacchain:nodes[1].inventory.release_url', allowed: /file: path on the machine/ },
  },
  {
    name: 'release_sha256 not a digest',
    config: (c) => (inventory(c).release_sha256 = 'abc123'),
    expected: { key: 'lacchain:nodes[1].inventory.release_sha256', allowed: 'a SHA-256 digest: 64 hex digits' },
  },
  {
    name: 'release without a pinned digest and no release_sha256',
    config: (c) => (inventory(c).node_release_version = '21.1.6'),
    expected: {
      key: 'lacchain:nodes[1].inventory.release_sha256',
      given: 'missing',
      allowed: /besu-21\.1\.6\.tar\.gz: Besu 21\.1\.6 has no published digest/,
    },
  },
  {
    name: 'release_sha256 other than the published digest of the official archive',
    config: (c) => (inventory(c).release_sha256 = 'ab'.repeat(32)),
    expected: {
      key: 'lacchain:nodes[1].inventory.release_sha256',
      allowed: /published digest of besu-23\.4\.1\.tar\.gz, 49d3a7a0/,
    },
  },
  {
    name: 'java_runtime_url over http',
    config: (c) => {
      inventory(c).java_runtime_url = 'http://mirror.example.org/jre-21.tar.gz';
      inventory(c).java_runtime_sha256 = 'ab'.repeat(32);
    },
    expected: { key: 'lacchain:nodes[1].inventory.java_runtime_url', allowed: /https: URL .* \(no http:\)/ },
  },
  {
    name: 'java_runtime_url without its digest',
    config: (c) => (inventory(c).java_runtime_url = 'https://mirror.example.org/jre-21.tar.gz'),
    expected: {
      key: 'lacchain:nodes[1].inventory.java_runtime_sha256',
      given: 'missing',
      allowed: /java_runtime_url and java_runtime_sha256 together/,
    },
  },
  {
    name: 'start_timeout_seconds too short',
    config: (c) => (inventory(c).start_timeout_seconds = 5),
    expected: { key: 'lacchain:nodes[1].inventory.start_timeout_seconds', allowed: /from 30 to 86400/ },
  },
  {
    name: 'host_key missing on a test network without the opt-out',
    config: (c) => delete inventory(c).host_key,
    expected: {
      key: 'lacchain:nodes[1].inventory.host_key',
      given: 'missing',
      allowed: /ssh-keyscan .*; or, on a test network only, accept_any_host_key: true/,
    },
  },
  {
    name: 'host_key and accept_any_host_key together',
    config: (c) => (inventory(c).accept_any_host_key = true),
    expected: { key: 'lacchain:nodes[1].inventory.accept_any_host_key', allowed: /not both/ },
  },
  {
    name: 'ssh private key in plain text',
    asWritten: true,
    expected: {
      key: 'lacchain:sshPrivateKey',
      given: /plain text \(not shown\)/,
      allowed: 'a secret: pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519',
    },
  },
  {
    name: 'node key in plain text beside an encrypted one',
    asWritten: true,
    config: (c) => {
      c['lacchain:sshPrivateKey'] = { secure: FAKE_SSH_KEY };
      c['lacchain:nodeKeys'] = { writer: { secure: KEY_ONE }, validator: `0x${'0'.repeat(63)}2` };
    },
    expected: {
      key: 'lacchain:nodeKeys.validator',
      given: /plain text \(not shown\)/,
      allowed: "a secret: pulumi config set --secret --path 'lacchain:nodeKeys.validator' < node.key",
    },
  },
  {
    name: 'rpc password in plain text (the engine marks no key secret)',
    asWritten: true,
    config: (c) => {
      withoutCompanions(c);
      c['lacchain:sshPrivateKey'] = { secure: FAKE_SSH_KEY };
      c['lacchain:rpc'] = { exposure: 'internal', authentication: { method: 'password', users: [{ name: 'alice' }] } };
      c['lacchain:rpcPasswords'] = { alice: 'correct horse battery' };
    },
    expected: {
      key: 'lacchain:rpcPasswords.alice',
      given: /plain text \(not shown\)/,
      allowed: "a secret: pulumi config set --secret --path 'lacchain:rpcPasswords.alice' (it asks for the password)",
    },
  },
  {
    name: 'host_key not a key',
    config: (c) => (inventory(c).host_key = 'fingerprint'),
    expected: { key: 'lacchain:nodes[1].inventory.host_key', allowed: /SSH public host key/ },
  },
  {
    name: 'dns_name invalid',
    config: (c) => (inventory(c).dns_name = 'bad_name.example.org'),
    expected: { key: 'lacchain:nodes[1].inventory.dns_name', allowed: /DNS name/ },
  },
  {
    name: 'host a mistyped IPv4 address (no DNS name either)',
    config: (c) => (inventory(c).host = '190.51.100.999'),
    expected: { key: 'lacchain:nodes[1].inventory.host', allowed: /an IPv4 address or a DNS name/ },
  },
  {
    name: 'dns_name all digits',
    config: (c) => (inventory(c).dns_name = '190.113.0.999'),
    expected: { key: 'lacchain:nodes[1].inventory.dns_name', allowed: /DNS name/ },
  },
  {
    name: 'unknown inventory field',
    config: (c) => (inventory(c).ansible_become = true),
    expected: { key: 'lacchain:nodes[1].inventory.ansible_become', given: 'unknown field', allowed: /node_ip/ },
  },
  {
    name: 'override not a boolean',
    config: (c) => (inventory(c).allow_below_minimum_hardware = 'yes'),
    expected: {
      key: 'lacchain:nodes[1].inventory.allow_below_minimum_hardware',
      given: 'given "yes"',
      allowed: 'true or false',
    },
  },
  // Secrets.
  {
    name: 'ssh private key missing, the stack logging in with one',
    config: (c) => {
      delete c['lacchain:sshPrivateKey'];
      c['lacchain:sshAuthentication'] = 'privateKey';
    },
    expected: {
      key: 'lacchain:sshPrivateKey',
      given: 'missing',
      allowed:
        'the SSH private key for node validator (lacchain:sshAuthentication is privateKey): pulumi config set --secret lacchain:sshPrivateKey < ~/.ssh/id_ed25519, or log in with your ssh agent: pulumi config rm lacchain:sshAuthentication',
    },
  },
  {
    name: 'ssh private key stored, the stack logging in with the agent',
    config: (c) => (c['lacchain:sshAuthentication'] = 'agent'),
    expected: {
      key: 'lacchain:sshPrivateKey',
      given: 'given a key (secret, not shown)',
      allowed:
        'no stored key when lacchain:sshAuthentication is agent (it would sit in the state unused): pulumi config rm lacchain:sshPrivateKey, or set lacchain:sshAuthentication to privateKey',
    },
  },
  {
    name: 'ssh authentication not a way to log in',
    config: (c) => (c['lacchain:sshAuthentication'] = 'password'),
    expected: { key: 'lacchain:sshAuthentication', given: 'given "password"', allowed: 'one of agent, privateKey' },
  },
  {
    name: 'ssh private key not a key',
    config: (c) => (c['lacchain:sshPrivateKey'] = 'hunter2'),
    expected: { key: 'lacchain:sshPrivateKey', given: 'given a value (secret, not shown)', allowed: /BEGIN/ },
  },
  {
    name: 'imported node key invalid',
    config: (c) => (c['lacchain:nodeKeys'] = { writer: '0x1234' }),
    expected: {
      key: 'lacchain:nodeKeys.writer',
      given: 'given a value that has 4 hex digits; a key file has exactly 64 (32 bytes) (secret, not shown)',
      allowed: /secp256k1 private key/,
    },
  },
  {
    name: 'imported node key zero',
    config: (c) => (c['lacchain:nodeKeys'] = { writer: `0x${'0'.repeat(64)}` }),
    expected: { key: 'lacchain:nodeKeys.writer', given: /is zero/, allowed: /secp256k1/ },
  },
  {
    name: 'imported key of an unknown node',
    config: (c) => (c['lacchain:nodeKeys'] = { writr: KEY_ONE }),
    expected: { key: 'lacchain:nodeKeys.writr', allowed: 'a node name of this stack: writer, validator' },
  },
  // Values file of a Kubernetes node.
  {
    name: 'values file missing',
    config: (c) => (nodes(c)[0].values = 'values/missing.yml'),
    expected: { file: 'values/missing.yml', key: '(file)', given: 'no such file', allowed: /existing YAML/ },
  },
  {
    name: 'values file not YAML',
    rawValues: 'deploy:\n  network: [unclosed\n',
    expected: { file: VALUES, key: /line 3/, allowed: 'a YAML document' },
  },
  {
    name: 'values file empty',
    rawValues: '',
    expected: { file: VALUES, key: 'deploy', given: 'missing', allowed: /fields network, typenode, publicIP/ },
  },
  {
    name: 'values with a section besides deploy',
    rawValues: `${yaml.dump(validWriterValues())}image: hyperledger/besu\n`,
    expected: { file: VALUES, key: 'image', given: 'unknown field', allowed: 'only the fields deploy' },
  },
  {
    name: 'values network of another stack',
    values: (v) => (v.deploy.network = 'main-net'),
    expected: {
      file: VALUES,
      key: 'deploy.network',
      given: 'given "main-net"',
      allowed: /open-protest-net \(the Helm name of open-protestnet/,
    },
  },
  {
    name: 'values network deprecated',
    values: (v) => (v.deploy.network = 'protest-net'),
    expected: { key: 'deploy.network', allowed: /deprecated/ },
  },
  {
    name: 'values network our name instead of Helm name',
    values: (v) => (v.deploy.network = 'open-protestnet'),
    expected: { key: 'deploy.network', allowed: /open-protest-net/ },
  },
  {
    name: 'values typenode disagrees with the stack',
    values: (v) => (v.deploy.typenode = 'validator'),
    expected: {
      key: 'deploy.typenode',
      given: 'given "validator"',
      allowed: "writer (the node's typenode in Pulumi.testnet.yaml)",
    },
  },
  {
    name: 'publicIP invalid',
    values: (v) => (v.deploy.publicIP = '203.0.113'),
    expected: { key: 'deploy.publicIP', given: 'given "203.0.113"', allowed: /IPv4/ },
  },
  {
    name: 'p2p host invalid',
    values: (v) => (v.deploy.p2p.host = 'my-node.example.org'),
    expected: { key: 'deploy.p2p.host', allowed: /IPv4/ },
  },
  {
    name: 'p2p port zero',
    values: (v) => (v.deploy.p2p.port = 0),
    expected: { key: 'deploy.p2p.port', given: 'given 0', allowed: 'a whole number from 1 to 65535' },
  },
  {
    name: 'p2p port as text',
    values: (v) => (v.deploy.p2p.port = '60606'),
    expected: { key: 'deploy.p2p.port', given: 'given "60606"', allowed: 'a whole number from 1 to 65535' },
  },
  {
    name: 'p2p missing',
    values: (v) => delete (v.deploy as Record<string, unknown>).p2p,
    expected: { key: 'deploy.p2p', given: 'missing', allowed: /fields host, port/ },
  },
  {
    name: 'unknown p2p field',
    values: (v) => (v.deploy.p2p.hots = '1.2.3.4'),
    expected: { key: 'deploy.p2p.hots', given: 'unknown field', allowed: 'only the fields host, port' },
  },
  {
    name: 'workerName missing',
    values: (v) => delete v.deploy.workerName,
    expected: { key: 'deploy.workerName', given: 'missing', allowed: /Kubernetes object name/ },
  },
  {
    name: 'workerName with capitals',
    values: (v) => (v.deploy.workerName = 'Worker_1'),
    expected: { key: 'deploy.workerName', allowed: /lowercase/ },
  },
  {
    name: 'nodeEmail invalid',
    values: (v) => (v.deploy.nodeEmail = 'ops@'),
    expected: { key: 'deploy.nodeEmail', given: 'given "ops@"', allowed: /e-mail/ },
  },
  {
    name: 'namespace invalid',
    values: (v) => (v.deploy.namespace = 'LACChain'),
    expected: { key: 'deploy.namespace', allowed: /Kubernetes name/ },
  },
  {
    name: 'volume size without unit',
    values: (v) => (v.deploy.volumeSize = '375'),
    expected: { key: 'deploy.volumeSize', given: 'given "375"', allowed: /375Gi/ },
  },
  {
    name: 'values release version unsupported',
    values: (v) => (v.deploy.releaseVersion = '26.1.0'),
    expected: { key: 'deploy.releaseVersion', allowed: /25.6.0/ },
  },
  ...(
    [
      ['image digest in upper case', 'imageDigest', `sha256:${'AB'.repeat(32)}`],
      ['image digest without sha256:', 'imageDigest', 'ab'.repeat(32)],
      ['image digest too short', 'imageDigest', `sha256:${'ab'.repeat(31)}`],
      ['image digest of another algorithm', 'imageDigest', `sha512:${'ab'.repeat(32)}`],
      ['image digest given as a tag', 'imageDigest', '23.4.1'],
      ['proxy image digest too long', 'proxyImageDigest', `sha256:${'ab'.repeat(32)}0`],
    ] as const
  ).map(([name, field, digest]): Case => ({
    name,
    values: (v) => (v.deploy[field] = digest),
    expected: {
      key: `deploy.${field}`,
      given: `given "${digest}"`,
      allowed: 'an image digest: sha256: followed by 64 lowercase hex digits, as the registry shows it',
    },
  })),
  {
    name: 'proxy image digest on a node without a proxy',
    config: (c) => Object.assign(nodes(c)[0], { typenode: 'validator', values: VALUES }),
    values: (v) => {
      v.deploy.typenode = 'validator';
      v.deploy.proxyImageDigest = `sha256:${'ab'.repeat(32)}`;
    },
    expected: {
      key: 'deploy.proxyImageDigest',
      given: `given "sha256:${'ab'.repeat(32)}"`,
      allowed: 'no proxyImageDigest for a validator: only writers run the reverse proxy',
    },
  },
  {
    name: 'unknown deploy field',
    values: (v) => (v.deploy.replicaCount = 1),
    expected: { key: 'deploy.replicaCount', given: 'unknown field', allowed: /publicIP/ },
  },
  {
    name: 'same p2p address on two nodes',
    config: (c) => (inventory(c).node_ip = '190.113.0.10'),
    expected: {
      key: 'node validator inventory.node_ip',
      given: 'given "190.113.0.10:60606"',
      allowed: /node writer uses it/,
    },
  },
];

function matches(actual: string, expected: string | RegExp | undefined): boolean {
  if (expected === undefined) return true;
  return typeof expected === 'string' ? actual === expected : expected.test(actual);
}

describe('settings validation', () => {
  it('has at least 40 distinct bad inputs', () => {
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, testCase) => {
    const config = validTestnetConfig();
    const values = validWriterValues() as Values;
    testCase.config?.(config);
    testCase.values?.(values);
    const problems = problemsOf(config, testCase.rawValues ?? values, undefined, testCase.asWritten);
    const expected = testCase.expected;
    const file = expected.file ?? (testCase.values || testCase.rawValues ? VALUES : STACK);
    const found = problems.filter(
      (p) =>
        p.file === file &&
        matches(p.key, expected.key) &&
        matches(p.given, expected.given) &&
        matches(p.allowed, expected.allowed),
    );
    expect({ problems, found: found.length }).toEqual({ problems, found: 1 });
    // One message per problem: a single mistake is reported once.
    expect(problems).toHaveLength(1);
  });

  it('takes two nodes on one machine with homes side by side and services of the form besu-<label>', () => {
    const config = validTestnetConfig();
    inventory(config).node_service = 'besu-validator-1';
    nodes(config).push({
      ...nodes(config)[1],
      name: 'second',
      typenode: 'bootnode',
      inventory: { ...inventory(config), node_ip: '190.51.100.9', node_home: '/opt/lacchain-2', node_service: 'besu' },
    });
    const loaded = load(config).settings.nodes.filter((n) => n.target === 'ssh');
    expect(loaded.map((n) => [n.name, n.host, n.serviceName, n.nodeHome])).toEqual([
      ['validator', '190.51.100.7', 'besu-validator-1', '/opt/lacchain'],
      ['second', '190.51.100.7', 'besu', '/opt/lacchain-2'],
    ]);
  });

  it('reports every problem at once, in stack config and values file', () => {
    const config = validTestnetConfig();
    inventory(config).node_ip = 'nope';
    nodes(config)[0].typenode = 'writer';
    const values = validWriterValues() as Values;
    values.deploy.publicIP = 'nope';
    const problems = problemsOf(config, values);
    expect(problems.map((p) => `${p.file} ${p.key}`)).toEqual([
      `${STACK} lacchain:nodes[1].inventory.node_ip`,
      `${VALUES} deploy.publicIP`,
    ]);
  });

  it('never echoes a secret', () => {
    const config = validTestnetConfig();
    config['lacchain:sshPrivateKey'] = 'my-secret-password';
    config['lacchain:nodeKeys'] = { writer: 'not-a-key-but-secret' };
    const message = (() => {
      try {
        load(config);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).toContain('lacchain:sshPrivateKey');
    expect(message).toContain('lacchain:nodeKeys');
    expect(message).not.toContain('my-secret-password');
    expect(message).not.toContain('not-a-key-but-secret');
  });

  it('refuses the deprecated network as a stack with its deprecation message', () => {
    expect(() => loadStack('legacy-protestnet', rawConfig({}), memoryFiles({}))).toThrow(/deprecated/);
  });

  it('formats each problem as file: key: given; allowed', () => {
    const config = validTestnetConfig();
    inventory(config).node_ip = '300.1.2.3';
    expect(() => load(config)).toThrow(
      `Pulumi.testnet.yaml: lacchain:nodes[1].inventory.node_ip: given "300.1.2.3"; allowed: an IPv4 address such as 203.0.113.10 (not 0.0.0.0, loopback or multicast); for a node's enode not a documentation one`,
    );
  });
});

describe("the monitoring client's image on an SSH node without its digest (#53)", () => {
  /** The stack's SSH validator alone, on `network`, its monitoring client without imageDigest. */
  function sshOnly(stack: 'testnet' | 'mainnet') {
    const config = validTestnetConfig();
    config['lacchain:network'] = stack === 'mainnet' ? 'mainnet-omega' : 'open-protestnet';
    config['lacchain:nodes'] = [nodes(config)[1]];
    delete companions(config).ethstats.imageDigest;
    return () => loadStack(stack, rawConfig(config, `Pulumi.${stack}.yaml`), memoryFiles({}));
  }

  it('testnet takes it: the machine runs the tag (the policy flags it)', () => {
    const ethstats = sshOnly('testnet')().settings.companions.find((c) => c.name === 'ethstats');
    expect(ethstats).toMatchObject({ image: 'docker.io/alethio/ethstats-cli:latest' });
    expect(ethstats).not.toHaveProperty('imageDigest');
  });

  it('mainnet refuses it, saying how to read the digest', () => {
    expect(sshOnly('mainnet')).toThrow(
      /lacchain:companions\.ethstats\.imageDigest: missing; allowed: the registry digest \(sha256:…\) of docker\.io\/alethio\/ethstats-cli:latest that you have checked \(npm run init reads it with podman or docker; .*which SSH node validator pulls by digest on a production network; or enabled: false/,
    );
  });
});

describe('valid settings', () => {
  it("take the relay signer's catalog release on an SSH writer without a digest: the catalog pins its git blob", () => {
    const config = validTestnetConfig();
    nodes(config)[1].typenode = 'writer';
    companions(config).relaySigner = {};
    const relaySigner = load(config).settings.companions.find((c) => c.name === 'relay-signer');
    expect(relaySigner).toMatchObject({
      version: '1.0.1',
      // By the commit its tag named, not the tag: a moved tag cannot change what is downloaded (issue 63, finding 8).
      releaseUrl:
        'https://raw.githubusercontent.com/LACNetNetworks/gas-management/8dd1b69b9cce0af1a70025bd9351085eff6a16c1/gas-relay-signer',
      gitBlob: 'd06aed7593325647c80aec3353a828327e7509d5',
    });
    expect(relaySigner).not.toHaveProperty('sha256');
  });

  it("take another relay signer release from its tag, with the operator's SHA-256 (the catalog pins no commit)", () => {
    const config = validTestnetConfig();
    nodes(config)[1].typenode = 'writer';
    companions(config).relaySigner = { version: '1.0.0', sha256: 'ab'.repeat(32) };
    const relaySigner = load(config).settings.companions.find((c) => c.name === 'relay-signer');
    expect(relaySigner).toMatchObject({
      version: '1.0.0',
      releaseUrl: 'https://raw.githubusercontent.com/LACNetNetworks/gas-management/v1.0.0/gas-relay-signer',
      sha256: 'ab'.repeat(32),
    });
    expect(relaySigner).not.toHaveProperty('gitBlob');
  });

  it("take the rotation client's catalog release on an SSH validator without a digest: the catalog pins its git blob", () => {
    const config = validTestnetConfig();
    companions(config).rotationValidator = {};
    const rotation = load(config).settings.companions.find((c) => c.name === 'rotation-validator');
    expect(rotation).toMatchObject({
      version: '1.0.0',
      releaseUrl: expect.stringMatching(
        /rotation-validator\/d0c133f1df9d3e629352b332ea05c73c338adead\/client\/client$/,
      ),
      gitBlob: '5bd0b6a60e25ad7aa66ccda8acfd0cf4ddd876f0',
    });
    expect(rotation).not.toHaveProperty('sha256');
  });

  it('load into the model with defaults filled in', () => {
    const config = validTestnetConfig();
    config['lacchain:nodeKeys'] = { validator: KEY_ONE.toUpperCase().replace('0X', '0x') };
    const { settings, secrets } = load(config);
    expect(settings.stack).toBe('testnet');
    expect(settings.network.networkId).toBe(648540);
    const [writer, validator] = settings.nodes;
    expect(writer).toMatchObject({
      name: 'writer',
      target: 'kubernetes',
      valuesFile: VALUES,
      publicIP: '190.113.0.10',
      p2pHost: '190.113.0.10',
      p2pPort: 60606,
      workerName: 'worker-1',
      namespace: 'lacchain',
      releaseVersion: '23.4.1',
      volumeSize: '375Gi',
    });
    expect(validator).toMatchObject({
      name: 'validator',
      target: 'ssh',
      host: '190.51.100.7',
      sshPort: 22,
      user: 'ubuntu',
      p2pHost: '190.51.100.7',
      nodeHome: '/opt/lacchain',
      serviceName: 'besu',
    });
    expect(secrets).toEqual({ sshPrivateKey: FAKE_SSH_KEY, nodeKeys: { validator: KEY_ONE } });
  });

  it('log in to SSH nodes with the agent when no key is stored, with the stored key otherwise, or as named', () => {
    const config = validTestnetConfig();
    expect(load(config).settings.sshAuthentication).toBe('privateKey');
    delete config['lacchain:sshPrivateKey'];
    const agent = load(config);
    expect([agent.settings.sshAuthentication, agent.secrets.sshPrivateKey]).toEqual(['agent', undefined]);
    config['lacchain:sshAuthentication'] = 'agent';
    expect(load(config).settings.sshAuthentication).toBe('agent');
    config['lacchain:sshAuthentication'] = 'privateKey';
    config['lacchain:sshPrivateKey'] = FAKE_SSH_KEY;
    expect(load(config).settings.sshAuthentication).toBe('privateKey');
  });

  it('do not need an SSH key when no node uses SSH', () => {
    const config = validTestnetConfig();
    config['lacchain:nodes'] = [nodes(config)[0]];
    delete config['lacchain:sshPrivateKey'];
    expect(load(config).settings.nodes).toHaveLength(1);
  });

  it('ignore other namespaces (provider settings)', () => {
    const config = validTestnetConfig();
    config['kubernetes:context'] = 'prod';
    expect(() => load(config)).not.toThrow();
  });
});

describe('settings as the engine hands them over (every top-level value a string)', () => {
  const engineText = (config: Config): Record<string, string> =>
    Object.fromEntries(Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const loadText = (values: Record<string, string>) =>
    loadStack(
      'testnet',
      // The SSH key is set with --secret, as the engine then marks it.
      { file: STACK, baseDir: '/project', values, secretKeys: ['lacchain:sshPrivateKey'] },
      memoryFiles({ [VALUES]: yaml.dump(validWriterValues()) }),
    );

  it.each([
    ['the stack file holds YAML true', 'true', true],
    ['pulumi config set lacchain:allowKeyDeletion false', 'false', false],
  ])('reads a boolean: %s', (_how, text, expected) => {
    const values = { ...engineText(validTestnetConfig()), 'lacchain:allowKeyDeletion': text };
    expect(loadText(values).settings.allowKeyDeletion).toBe(expected);
  });

  it('reads lists and mappings from their JSON text, nested types kept', () => {
    const config = validTestnetConfig();
    inventory(config).port = 2222;
    inventory(config).allow_below_minimum_hardware = true;
    config['lacchain:rpc'] = { exposure: 'tls-only', allowUnsafeApis: false, proxy: { burst: 5 } };
    // The validator keeps its RPC inside (its rotation client needs IBFT, never reachable from outside).
    nodes(config)[1].rpc = { exposure: 'internal' };
    const { settings } = loadText(engineText(config));
    expect(settings.nodes[1]).toMatchObject({ sshPort: 2222, allowBelowMinimumHardware: true });
    expect(settings.nodes[0].rpc).toMatchObject({ exposure: 'tls-only', proxy: { burst: 5 } });
    expect(settings.nodes[1].rpc).toMatchObject({ exposure: 'internal', proxy: { burst: 5 } });
  });

  it('knows the kind of every top-level key the schema has, and which must be secret (one table)', () => {
    expect(Object.keys(CONFIG_KEY_KINDS)).toEqual(Object.keys(stackConfigSchema.shape));
    expect(SECRET_CONFIG_KEYS).toEqual([
      'lacchain:sshPrivateKey',
      'lacchain:nodeKeys',
      'lacchain:backupPassword',
      'lacchain:backupS3Keys',
      'lacchain:metricsToken',
      'lacchain:rpcPasswords',
    ]);
    expect(CONFIG_KEY_KINDS['lacchain:allowKeyDeletion']).toBe('boolean');
    expect(CONFIG_KEY_KINDS['lacchain:nodes']).toBe('list');
  });
});

describe("a node's public address on mainnet (the address in the enode sent for permissioning)", () => {
  const ALLOWED =
    'on mainnet-omega, a public IPv4 address that peers reach and the network permissions (it is in the enode): not in a private (10/8, 172.16/12, 192.168/16), shared (100.64/10), loopback, link-local (169.254/16), unspecified, benchmarking (198.18/15) or documentation (192.0.2/24, 198.51.100/24, 203.0.113/24) range';

  itAnswers('%s is %s', nonPublicIpv4Range, [
    ['10.0.0.5', 'a private address (10.0.0.0/8)'],
    ['10.255.255.255', 'a private address (10.0.0.0/8)'],
    ['172.16.0.1', 'a private address (172.16.0.0/12)'],
    ['172.31.255.254', 'a private address (172.16.0.0/12)'],
    ['192.168.1.10', 'a private address (192.168.0.0/16)'],
    ['100.64.0.1', 'a shared (carrier-grade NAT) address (100.64.0.0/10)'],
    ['100.127.255.254', 'a shared (carrier-grade NAT) address (100.64.0.0/10)'],
    ['169.254.10.1', 'a link-local address (169.254.0.0/16)'],
    ['127.0.0.2', 'a loopback address (127.0.0.0/8)'],
    ['0.1.2.3', 'an unspecified address (0.0.0.0/8)'],
    ['192.0.2.7', 'a documentation address (192.0.2.0/24)'],
    ['198.51.100.7', 'a documentation address (198.51.100.0/24)'],
    ['203.0.113.10', 'a documentation address (203.0.113.0/24)'],
    ['198.18.0.1', 'a benchmarking address (198.18.0.0/15)'],
  ]);

  it.each([
    '9.255.255.255',
    '11.0.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '192.0.3.1',
    '200.10.20.20',
    '8.8.8.8',
  ])('%s is public', (ip) => {
    expect(nonPublicIpv4Range(ip)).toBeUndefined();
  });

  /** A mainnet stack of a validator on a cluster (values/validator.yml) and one over SSH, with the given addresses. */
  function mainnet(addresses: { publicIP: string; p2pHost: string; nodeIp: string }) {
    const config = {
      'lacchain:network': 'mainnet-omega',
      'lacchain:nodes': [
        { name: 'validator', typenode: 'validator', target: 'kubernetes' },
        {
          name: 'remote',
          typenode: 'validator',
          target: 'ssh',
          inventory: {
            host: '10.0.0.9', // the address this machine reaches it at: a VPN's is fine
            host_key: FAKE_HOST_KEY,
            node_ip: addresses.nodeIp,
            node_name: 'org-remote',
            node_email: 'ops@example.org',
          },
        },
      ],
      'lacchain:sshPrivateKey': FAKE_SSH_KEY,
      'lacchain:companions': TEST_COMPANIONS,
    };
    const values = {
      deploy: {
        network: 'main-net',
        typenode: 'validator',
        publicIP: addresses.publicIP,
        p2p: { host: addresses.p2pHost, port: 60606 },
        workerName: 'worker-2',
        nodeName: 'org-validator',
        nodeEmail: 'ops@example.org',
      },
    };
    return () =>
      loadStack(
        'mainnet',
        rawConfig(config, 'Pulumi.mainnet.yaml'),
        memoryFiles({ 'values/validator.yml': yaml.dump(values) }),
      );
  }

  it('refuses a private, shared or documentation address, naming the file, the key, the value and what is allowed', () => {
    const problems = (() => {
      try {
        mainnet({ publicIP: '192.168.1.10', p2pHost: '203.0.113.20', nodeIp: '100.64.0.1' })();
      } catch (error) {
        if (error instanceof SettingsError) return error.message.split('\n');
        throw error;
      }
      throw new Error('expected the settings to be refused');
    })();
    expect(problems).toEqual([
      `values/validator.yml: deploy.publicIP: given "192.168.1.10", a private address (192.168.0.0/16); allowed: ${ALLOWED}`,
      `values/validator.yml: deploy.p2p.host: given "203.0.113.20", a documentation address (203.0.113.0/24); allowed: ${ALLOWED}`,
      `Pulumi.mainnet.yaml: lacchain:nodes[1].inventory.node_ip: given "100.64.0.1", a shared (carrier-grade NAT) address (100.64.0.0/10); allowed: ${ALLOWED}`,
    ]);
  });

  it('takes public addresses (and any address this machine reaches an SSH node at)', () => {
    const { settings } = mainnet({ publicIP: '200.10.20.20', p2pHost: '200.10.20.20', nodeIp: '200.10.20.7' })();
    expect(settings.nodes.map((n) => n.p2pHost)).toEqual(['200.10.20.20', '200.10.20.7']);
  });

  /** The testnet stack of a writer on a cluster and a validator over SSH, with the given addresses. */
  function testnet(addresses: { publicIP: string; p2pHost: string; nodeIp: string }) {
    const config = validTestnetConfig();
    inventory(config).node_ip = addresses.nodeIp;
    const values = validWriterValues() as Values;
    values.deploy.publicIP = addresses.publicIP;
    values.deploy.p2p.host = addresses.p2pHost;
    return { config, values };
  }

  it('testnet: private addresses stay allowed (a lab network), the address in the enode', () => {
    const { config, values } = testnet({ publicIP: '192.168.1.10', p2pHost: '172.16.0.10', nodeIp: '10.0.0.5' });
    expect(load(config, values).settings.nodes.map((n) => n.p2pHost)).toEqual(['172.16.0.10', '10.0.0.5']);
  });

  it('testnet: a documentation address is refused too (an example: no peer reaches it, no network permissions it)', () => {
    const { config, values } = testnet({ publicIP: '203.0.113.10', p2pHost: '192.0.2.10', nodeIp: '198.51.100.7' });
    const allowed =
      'on open-protestnet, an IPv4 address peers reach (a private one too, on this test network), not in a documentation range (192.0.2/24, 198.51.100/24, 203.0.113/24): it is in the enode, and no network permissions an example address';
    expect(problemsOf(config, values).map((p) => `${p.file}: ${p.key}: ${p.given}; allowed: ${p.allowed}`)).toEqual([
      `values/writer.yml: deploy.publicIP: given "203.0.113.10", a documentation address (203.0.113.0/24); allowed: ${allowed}`,
      `values/writer.yml: deploy.p2p.host: given "192.0.2.10", a documentation address (192.0.2.0/24); allowed: ${allowed}`,
      `Pulumi.testnet.yaml: lacchain:nodes[1].inventory.node_ip: given "198.51.100.7", a documentation address (198.51.100.0/24); allowed: ${allowed}`,
    ]);
  });
});

describe("an SSH node's system (inventory os)", () => {
  it('takes a validator on the RHEL family (by its major version) and keeps the system for the plan', () => {
    const config = validTestnetConfig();
    inventory(config).os = 'rocky 9.6';
    const ssh = load(config).settings.nodes.find((n) => n.target === 'ssh');
    expect(ssh && 'system' in ssh ? ssh.system : undefined).toBe('rocky 9.6');
  });

  it('leaves the system unknown when not given: the preflight step is the first to check it', () => {
    const ssh = load(validTestnetConfig()).settings.nodes.find((n) => n.target === 'ssh');
    expect(ssh && 'system' in ssh ? ssh.system : 'absent').toBeUndefined();
  });
});
