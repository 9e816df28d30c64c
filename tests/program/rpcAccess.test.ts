/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * RPC access and authentication (`lacchain:rpc`): the setting's checks with their exact messages, config.toml per
 * choice and per Besu release, the proxy configuration per choice, the Kubernetes Service, Secret and volume, and
 * the SSH steps.
 */
import * as bcrypt from 'bcryptjs';
import { generateKeyPairSync } from 'crypto';
import * as yaml from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { besuConfig, BesuConfigInput, renderConfigToml } from '../../core/besu/configToml';
import { acceptedOptions, KNOWN_RELEASES } from '../../core/catalog/besu';
import { NODE_TYPES } from '../../core/catalog/nodeTypes';
import { CHECK_METHODS } from '../../core/catalog/rpc';
import { renderNginxServers, ProxyAccess } from '../../core/proxy/nginxConf';
import { bcryptHash, bcryptSalt, renderCredentialsToml } from '../../core/rpc/credentials';
import { loadStack } from '../../core/settings/load';
import { SettingsError } from '../../core/settings/problems';
import { deterministicHex, isWrappedSecret, unwrapSecrets } from '../../tools/recording/engine';
import {
  companionsForRpc,
  memoryFiles,
  rawConfig,
  validTestnetConfig,
  validWriterValues,
  writerConfigInput,
  FAKE_SSH_KEY,
  KEY_ONE,
} from '../../testing/fixtures';
import { declareProgram, Declared, inputsOf, resource } from '../../testing/program';
import { recordProgram } from '../../testing/pulumi';
import { kubernetesStack } from '../../testing/values';

const recorded = recordProgram();
const STACK = 'Pulumi.testnet.yaml';
const PASSWORD = 'correct horse battery';
const PUBLIC_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();

type Config = Record<string, unknown>;

function load(rpc: unknown, extra: Config = {}, files: Record<string, string> = {}) {
  const config: Config = {
    ...validTestnetConfig(),
    'lacchain:rpc': rpc,
    'lacchain:companions': companionsForRpc(rpc),
    ...extra,
  };
  if (rpc === undefined) delete config['lacchain:rpc'];
  const all = { 'values/writer.yml': yaml.dump(validWriterValues()), ...files };
  return loadStack('testnet', rawConfig(config, STACK), memoryFiles(all));
}

function messages(rpc: unknown, extra: Config = {}, files: Record<string, string> = {}): string[] {
  try {
    load(rpc, extra, files);
  } catch (error) {
    if (error instanceof SettingsError) return error.message.split('\n');
    throw error;
  }
  throw new Error('expected the settings to be refused');
}

const passwordAuth = { method: 'password', users: [{ name: 'alice' }] };
/** The salt the test engine gives RandomBytes `<node>-rpc-salt-<user>` (testing/pulumi.ts: by resource name). */
const testSalt = (node: string, user: string) => deterministicHex(`${node}-rpc-salt-${user}`, 16);

describe('the lacchain:rpc setting', () => {
  it('defaults: the node type exposure and APIs, no extra hosts, no CORS, no authentication, 80 connections', () => {
    const { settings, secrets } = load(undefined);
    expect(settings.nodes[0].rpc).toEqual({
      key: 'lacchain:rpc',
      nodeKey: 'lacchain:nodes[0].rpc',
      apis: undefined,
      exposure: 'public',
      hostAllowlist: [],
      corsOrigins: [],
      noAuthMethods: [],
      allowUnsafeApis: false,
      allowConsensusVotesFromOutside: false,
      maxActiveConnections: 80,
      proxy: { maxBodySize: '1m', requestsPerSecond: 20, burst: 40, maxConnectionsPerClient: 20 },
    });
    // The validator: the same setting, but its type keeps its RPC inside.
    expect(settings.nodes[1].rpc).toEqual({
      ...settings.nodes[0].rpc,
      nodeKey: 'lacchain:nodes[1].rpc',
      exposure: 'internal',
    });
    expect(secrets.rpcPasswords).toBeUndefined();
  });

  it('loads password authentication with its secret passwords, and jwt with a key file', () => {
    const password = load(
      { exposure: 'internal', authentication: passwordAuth, noAuthMethods: ['eth_chainId'] },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
    );
    expect(password.settings.nodes[0].rpc.authentication).toEqual({
      method: 'password',
      users: [{ name: 'alice', permissions: ['*:*'] }],
    });
    expect(password.secrets.rpcPasswords).toEqual({ alice: PASSWORD });
    const jwt = load(
      { exposure: 'internal', authentication: { method: 'jwt', publicKey: 'keys/rpc.pem', algorithm: 'RS256' } },
      {},
      {
        'keys/rpc.pem': PUBLIC_KEY,
      },
    );
    expect(jwt.settings.nodes[0].rpc.authentication).toEqual({
      method: 'jwt',
      publicKey: PUBLIC_KEY,
      algorithm: 'RS256',
    });
  });

  const cases: [string, unknown, Config, string[]][] = [
    [
      'unknown API group',
      { apis: ['ETH', 'ETHER'] },
      {},
      [
        `${STACK}: lacchain:rpc.apis[1]: given "ETHER"; allowed: an API group: one of ADMIN, CLIQUE, DEBUG, EEA, ETH, IBFT, MINER, NET, PERM, PLUGINS, PRIV, QBFT, TRACE, TXPOOL, WEB3`,
      ],
    ],
    [
      'unknown exposure',
      { exposure: 'private' },
      {},
      [`${STACK}: lacchain:rpc.exposure: given "private"; allowed: one of public, tls-only, internal`],
    ],
    [
      'unsafe API on a public port',
      { apis: ['ETH', 'NET', 'ADMIN'] },
      {},
      [
        `${STACK}: lacchain:rpc.apis: given ["ETH","NET","ADMIN"]; allowed: API groups without ADMIN, DEBUG, TXPOOL, PERM (node writer: RPC reachable from outside with exposure public); use exposure internal, or set lacchain:rpc.allowUnsafeApis: true to override (the plan and the policy flag it)`,
      ],
    ],
    [
      "unsafe API on tls-only (the machine's 443 and the writer's 80 are public)",
      { exposure: 'tls-only', apis: ['ETH', 'DEBUG'] },
      {},
      [
        `${STACK}: lacchain:rpc.apis: given ["ETH","DEBUG"]; allowed: API groups without ADMIN, DEBUG, TXPOOL, PERM (node writer, node validator: RPC reachable from outside with exposure tls-only); use exposure internal, or set lacchain:rpc.allowUnsafeApis: true to override (the plan and the policy flag it)`,
      ],
    ],
    [
      'CORS * on a public port',
      { corsOrigins: ['*'] },
      {},
      [
        `${STACK}: lacchain:rpc.corsOrigins: given ["*"]; allowed: named origins such as https://app.example.org, not * (node writer: RPC reachable from outside with exposure public); set lacchain:rpc.allowUnsafeApis: true to override (the plan and the policy flag it)`,
      ],
    ],
    [
      'CORS origin with a path',
      { corsOrigins: ['https://app.example.org/x'] },
      {},
      [
        `${STACK}: lacchain:rpc.corsOrigins[0]: given "https://app.example.org/x"; allowed: an origin such as https://app.example.org (scheme, host and optional port), or *`,
      ],
    ],
    [
      'host allowlist entry not a host',
      { hostAllowlist: ['rpc example'] },
      {},
      [
        `${STACK}: lacchain:rpc.hostAllowlist[0]: given "rpc example"; allowed: a host name or IPv4 address the RPC answers to, such as rpc.example.org, or * (any host)`,
      ],
    ],
    [
      'unknown authentication method',
      { authentication: { method: 'basic' } },
      {},
      [`${STACK}: lacchain:rpc.authentication.method: given "basic"; allowed: one of password, jwt`],
    ],
    [
      'password authentication without users',
      { authentication: { method: 'password' } },
      {},
      [
        `${STACK}: lacchain:rpc.authentication.users: missing; allowed: the users of password authentication: a list of { name, permissions? }`,
      ],
    ],
    [
      'password user without a password',
      { exposure: 'internal', authentication: passwordAuth },
      {},
      [
        `${STACK}: lacchain:rpcPasswords.alice: missing; allowed: the password of RPC user alice: pulumi config set --secret --path 'lacchain:rpcPasswords.alice' <password>`,
      ],
    ],
    [
      'a short password is refused without being shown',
      { exposure: 'internal', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: 'hunter2' } },
      [
        `${STACK}: lacchain:rpcPasswords.alice: given a value that is shorter than 12 characters (secret, not shown); allowed: a password of 12 characters to 72 bytes, set with --secret`,
      ],
    ],
    [
      'a password for an unknown user',
      { exposure: 'internal', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: PASSWORD, bob: PASSWORD } },
      [
        `${STACK}: lacchain:rpcPasswords.bob: given a password for a user that is not an RPC user; allowed: a user of lacchain:rpc.authentication.users: alice`,
      ],
    ],
    [
      'a bad permission',
      {
        exposure: 'internal',
        authentication: { method: 'password', users: [{ name: 'alice', permissions: ['all'] }] },
      },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
      [
        `${STACK}: lacchain:rpc.authentication.users[0].permissions[0]: given "all"; allowed: a permission <api>:<method> such as *:*, net:* or eth:blockNumber`,
      ],
    ],
    [
      'jwt without a public key',
      { authentication: { method: 'jwt' } },
      {},
      [
        `${STACK}: lacchain:rpc.authentication.publicKey: missing; allowed: a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----), as text or a file beside the stack config`,
      ],
    ],
    [
      'jwt key file missing',
      { authentication: { method: 'jwt', publicKey: 'nowhere.pem' } },
      {},
      [
        `${STACK}: lacchain:rpc.authentication.publicKey: given the file "nowhere.pem", which does not exist; allowed: a PEM public key (-----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----), as text or a file beside the stack config`,
      ],
    ],
    [
      // Logins and tokens never cross a reachable port in plain text (docs/settings.md: "With authentication on").
      'password authentication with exposure public (Besu 4545 is plain HTTP on both paths)',
      { authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
      [
        `${STACK}: lacchain:rpc.exposure: given "public"; allowed: internal while lacchain:rpc.authentication is on, so logins and tokens never cross the network in plain text (with exposure public, plain HTTP reaches node writer: 4545 and 80); a Kubernetes pod has no TLS: keep its RPC internal and put your own TLS ingress in front of it`,
      ],
    ],
    [
      'jwt authentication with exposure public (tokens in plain text)',
      { authentication: { method: 'jwt', publicKey: PUBLIC_KEY } },
      {},
      [
        `${STACK}: lacchain:rpc.exposure: given "public"; allowed: internal while lacchain:rpc.authentication is on, so logins and tokens never cross the network in plain text (with exposure public, plain HTTP reaches node writer: 4545 and 80); a Kubernetes pod has no TLS: keep its RPC internal and put your own TLS ingress in front of it`,
      ],
    ],
    [
      "authentication with exposure tls-only and a Kubernetes writer (the Service's 80 is plain HTTP)",
      { exposure: 'tls-only', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
      [
        `${STACK}: lacchain:rpc.exposure: given "tls-only"; allowed: internal while lacchain:rpc.authentication is on, so logins and tokens never cross the network in plain text (with exposure tls-only, plain HTTP reaches node writer: 80); a Kubernetes pod has no TLS: keep its RPC internal and put your own TLS ingress in front of it`,
      ],
    ],
    [
      'authentication with exposure public on SSH nodes only (tls-only would do)',
      { exposure: 'public', authentication: passwordAuth },
      {
        'lacchain:rpcPasswords': { alice: PASSWORD },
        'lacchain:nodes': [(validTestnetConfig()['lacchain:nodes'] as unknown[])[1]],
      },
      [
        `${STACK}: lacchain:rpc.exposure: given "public"; allowed: tls-only or internal while lacchain:rpc.authentication is on, so logins and tokens never cross the network in plain text (with exposure public, plain HTTP reaches node validator: 4545); tls-only serves the RPC over TLS on 443; internal keeps the RPC inside the machine`,
      ],
    ],
    [
      'exempt methods without authentication',
      { noAuthMethods: ['eth_chainId'] },
      {},
      [
        `${STACK}: lacchain:rpc.noAuthMethods: given ["eth_chainId"]; allowed: no exempt methods without lacchain:rpc.authentication (every method is open then)`,
      ],
    ],
    [
      'connections out of range',
      { maxActiveConnections: 0 },
      {},
      [`${STACK}: lacchain:rpc.maxActiveConnections: given 0; allowed: a whole number from 1 to 10000`],
    ],
    [
      'proxy body size',
      { proxy: { maxBodySize: '1g' } },
      {},
      [`${STACK}: lacchain:rpc.proxy.maxBodySize: given "1g"; allowed: an nginx size such as 1m or 512k (1k to 100m)`],
    ],
    [
      'unknown field',
      { exposure: 'public', ports: [4545] },
      {},
      [
        `${STACK}: lacchain:rpc.ports: unknown field; allowed: only the fields apis, exposure, hostAllowlist, corsOrigins, authentication, noAuthMethods, allowUnsafeApis, allowConsensusVotesFromOutside, maxActiveConnections, proxy`,
      ],
    ],
  ];
  it.each(cases)('%s', (_name, rpc, extra, expected) => {
    expect(messages(rpc, extra)).toEqual(expected);
  });

  it('refuses authentication on a release without rpc-http-api-methods-no-auth, naming node and release', () => {
    const values = validWriterValues() as any;
    values.deploy.releaseVersion = '22.1.0';
    expect(
      messages(
        { exposure: 'internal', authentication: passwordAuth },
        { 'lacchain:rpcPasswords': { alice: PASSWORD } },
        { 'values/writer.yml': yaml.dump(values) },
      ),
    ).toEqual([
      `${STACK}: lacchain:rpc.authentication: given for node writer, which runs Besu 22.1.0; allowed: a node on Besu 23.4.1 or newer (Besu 22.1.0 has no rpc-http-api-methods-no-auth, which keeps the start check and npm run node working with authentication on), or no such setting`,
    ]);
  });

  it('refuses a connection limit on a release that has none', () => {
    const config = validTestnetConfig() as any;
    config['lacchain:nodes'][1].inventory.node_release_version = '20.10.4';
    config['lacchain:nodes'][1].inventory.release_sha256 = 'cd'.repeat(32);
    expect(messages({ maxActiveConnections: 40 }, { 'lacchain:nodes': config['lacchain:nodes'] })).toEqual([
      `${STACK}: lacchain:rpc.maxActiveConnections: given for node validator, which runs Besu 20.10.4; allowed: a node on Besu 21.1.6 or newer (Besu 20.10.4 has no rpc-http-max-active-connections), or no such setting`,
    ]);
  });

  it('accepts authentication where no reachable port is plain HTTP: internal, and tls-only on SSH or without a cluster writer', () => {
    const passwords = { 'lacchain:rpcPasswords': { alice: PASSWORD } };
    expect(() => load({ exposure: 'internal', authentication: passwordAuth }, passwords)).not.toThrow();
    const sshOnly = { 'lacchain:nodes': [(validTestnetConfig()['lacchain:nodes'] as unknown[])[1]] };
    expect(() =>
      load({ exposure: 'tls-only', authentication: passwordAuth }, { ...passwords, ...sshOnly }),
    ).not.toThrow();
    // A Kubernetes validator has no RPC port on its Service with tls-only.
    const clusterValidator = {
      'lacchain:nodes': [{ name: 'v', typenode: 'validator', target: 'kubernetes', values: 'values/writer.yml' }],
    };
    const values = validWriterValues() as any;
    values.deploy.typenode = 'validator';
    expect(() =>
      load(
        { exposure: 'tls-only', authentication: passwordAuth },
        { ...passwords, ...clusterValidator },
        {
          'values/writer.yml': yaml.dump(values),
        },
      ),
    ).not.toThrow();
  });

  it('accepts unsafe APIs with the explicit override, or when the RPC stays inside', () => {
    expect(() => load({ apis: ['ETH', 'ADMIN'], allowUnsafeApis: true })).not.toThrow();
    expect(() => load({ apis: ['ETH', 'ADMIN', 'DEBUG'], exposure: 'internal' })).not.toThrow();
  });
});

describe('config.toml per choice and per Besu release', () => {
  const input = (releaseVersion: string, rpc?: BesuConfigInput['rpc']): BesuConfigInput =>
    writerConfigInput(releaseVersion, {
      paths: {
        dataPath: '/data',
        genesisFile: '/g.json',
        nodeKeyFile: '/key',
        rpcCredentialsFile: '/auth/rpc-credentials.toml',
        rpcJwtPublicKeyFile: '/cfg/rpc-jwt-public-key.pem',
      },
      rpc,
    });

  it.each([...KNOWN_RELEASES])('Besu %s: a closed, limited RPC renders only accepted keys', (version) => {
    const rpc = {
      apis: ['ETH', 'NET'],
      bindAll: false,
      hostAllowlist: ['rpc.example.org'],
      corsOrigins: ['https://app.example.org'],
      maxActiveConnections: 80,
    };
    const config = besuConfig(input(version, rpc));
    for (const key of Object.keys(config)) expect(acceptedOptions(version).has(key)).toBe(true);
    expect(config['rpc-http-host']).toBe('127.0.0.1');
    expect(config['rpc-http-api']).toEqual(['ETH', 'NET']);
    expect(config['rpc-http-cors-origins']).toEqual(['https://app.example.org']);
    expect(config[version < '1.5.2' && version.startsWith('1.') ? 'host-whitelist' : 'host-allowlist']).toEqual([
      'localhost',
      '127.0.0.1',
      '190.113.0.10',
      'rpc.example.org',
    ]);
    expect(config['rpc-http-authentication-enabled']).toBeUndefined();
    expect(parseToml(renderConfigToml(input(version, rpc)))).toEqual(config);
  });

  it.each(['23.4.1', '24.1.0', '25.5.0'])('Besu %s: password authentication with the check methods exempt', (v) => {
    const config = besuConfig(
      input(v, { bindAll: true, authentication: { method: 'password' }, noAuthMethods: ['eth_chainId'] }),
    );
    expect(config).toMatchObject({
      'rpc-http-host': '0.0.0.0',
      'rpc-http-authentication-enabled': true,
      'rpc-http-authentication-credentials-file': '/auth/rpc-credentials.toml',
      'rpc-http-api-methods-no-auth': [...CHECK_METHODS, 'eth_chainId'],
    });
    expect(config['rpc-http-authentication-jwt-public-key-file']).toBeUndefined();
  });

  it('jwt authentication with its algorithm', () => {
    const config = besuConfig(
      input('24.1.0', { bindAll: true, authentication: { method: 'jwt', algorithm: 'ES256' } }),
    );
    expect(config).toMatchObject({
      'rpc-http-authentication-enabled': true,
      'rpc-http-authentication-jwt-public-key-file': '/cfg/rpc-jwt-public-key.pem',
      'rpc-http-authentication-jwt-algorithm': 'ES256',
    });
    expect(config['rpc-http-authentication-credentials-file']).toBeUndefined();
  });

  it('refuses to render an option the release lacks (the settings refuse it first)', () => {
    expect(() => besuConfig(input('22.1.0', { bindAll: true, authentication: { method: 'password' } }))).toThrow(
      'Besu 22.1.0 does not accept: rpc-http-api-methods-no-auth',
    );
    expect(() => besuConfig(input('20.10.4', { bindAll: true, maxActiveConnections: 10 }))).toThrow(
      'Besu 20.10.4 does not accept: rpc-http-max-active-connections',
    );
  });

  it("writes the connection limit only when it is not Besu's default (80), and * alone as allowlist", () => {
    expect(besuConfig(input('21.1.6', { bindAll: true, maxActiveConnections: 80 }))).not.toHaveProperty(
      'rpc-http-max-active-connections',
    );
    expect(besuConfig(input('21.1.6', { bindAll: true, maxActiveConnections: 20 }))).toMatchObject({
      'rpc-http-max-active-connections': 20,
    });
    expect(besuConfig(input('23.4.1', { bindAll: true, hostAllowlist: ['*'] }))['host-allowlist']).toEqual(['*']);
  });
});

describe('the credentials file', () => {
  const SALT = '00112233445566778899aabbccddeeff';
  const OTHER_SALT = 'ffeeddccbbaa99887766554433221100';

  it("turns 16 random bytes into bcrypt's salt: $2b$10$ and 22 characters of bcrypt's alphabet, as bcryptjs encodes them", () => {
    const salt = bcryptSalt(SALT);
    expect(salt).toMatch(/^\$2b\$10\$[./A-Za-z0-9]{22}$/);
    expect(salt.slice(7)).toBe(bcrypt.encodeBase64(Buffer.from(SALT, 'hex'), 16));
    // bcryptjs reads the same 16 bytes back from it.
    expect(Buffer.from(bcrypt.decodeBase64(salt.slice(7), 16)).toString('hex')).toBe(SALT);
    expect(() => bcryptSalt('00')).toThrow('a bcrypt salt is 16 bytes, given as 32 hex digits');
    expect(() => bcryptSalt(`${SALT.slice(2)}zz`)).toThrow(/^a bcrypt salt is 16 bytes/);
  });

  it('is bcrypt ($2b$10$) with the given salt, never one derived from the user and password', () => {
    const hash = bcryptHash(PASSWORD, SALT);
    expect(hash).toMatch(/^\$2b\$10\$[./A-Za-z0-9]{53}$/);
    expect(hash.startsWith(bcryptSalt(SALT))).toBe(true);
    expect(bcrypt.compareSync(PASSWORD, hash)).toBe(true);
    expect(bcrypt.compareSync('wrong password!', hash)).toBe(false);
    // The same salt and password: the same hash (no rollout); another salt: another hash, for the same user too.
    expect(bcryptHash(PASSWORD, SALT)).toBe(hash);
    const users = [{ name: 'alice', permissions: ['*:*'] }];
    const text = renderCredentialsToml(users, { alice: PASSWORD }, { alice: SALT });
    expect(parseToml(text)).toEqual({ Users: { alice: { password: hash, permissions: ['*:*'] } } });
    expect(renderCredentialsToml(users, { alice: PASSWORD }, { alice: SALT })).toBe(text);
    const other = renderCredentialsToml(users, { alice: PASSWORD }, { alice: OTHER_SALT });
    expect(other).not.toBe(text);
    expect(bcrypt.compareSync(PASSWORD, (parseToml(other) as any).Users.alice.password)).toBe(true);
    expect(text).not.toContain(PASSWORD);
    expect(() => renderCredentialsToml(users, { alice: PASSWORD }, {})).toThrow('no bcrypt salt for RPC user alice');
  });
});

describe('the proxy configuration per choice', () => {
  const access: ProxyAccess = {
    hosts: ['localhost', '127.0.0.1', '190.113.0.10'],
    login: false,
    cors: false,
    maxBodySize: '512k',
    requestsPerSecond: 5,
    burst: 10,
    maxConnectionsPerClient: 8,
    zone: 'lacchain_besu',
  };
  const tls = { certificateFile: '/t/c.crt', keyFile: '/t/c.key' };

  it('opens with the rate zone, refuses other Hosts with 403 on each port, limits size and rate', () => {
    const text = renderNginxServers({ purpose: 'p', servers: [{ port: 443, tls }, { port: 80 }], access });
    expect(text.indexOf('limit_req_zone $binary_remote_addr zone=lacchain_besu:10m rate=5r/s;')).toBeLessThan(
      text.indexOf('server {'),
    );
    expect(text).toContain('listen 443 ssl default_server;');
    expect(text).toContain('listen 80 default_server;');
    expect(text.match(/return 403 '\{"message":"Host not authorized\."\}';/g)).toHaveLength(2);
    expect(text.match(/server_name localhost 127\.0\.0\.1 190\.113\.0\.10;/g)).toHaveLength(2);
    expect(text).toContain('client_max_body_size 512k;');
    expect(text).toContain('limit_req zone=lacchain_besu burst=10 nodelay;');
    expect(text).toContain('proxy_set_header Authorization $http_authorization;');
    expect(text).toContain('location ~ ^/(liveness|readiness)$ {');
    expect(text).not.toContain('location = /login');
    expect(text).toContain('limit_except POST { deny all; }');
  });

  it('lets POST /login through with password authentication, and preflight requests with CORS', () => {
    const text = renderNginxServers({
      purpose: 'p',
      servers: [{ port: 80 }],
      access: { ...access, login: true, cors: true },
    });
    expect(text).toContain('location = /login {');
    expect(text).toContain('limit_except POST OPTIONS { deny all; }');
  });

  it('a plain server that redirects: a request with an allowed Host gets 308 to https, one with credentials 403, nothing reaches Besu', () => {
    const text = renderNginxServers({
      purpose: 'p',
      servers: [
        { port: 443, tls },
        { port: 80, redirectToHttps: 443 },
      ],
      access: { ...access, login: true },
    });
    const [, plain] = text.split('listen 80;');
    expect(plain).toBeDefined();
    const block = plain.slice(0, plain.indexOf('\n}'));
    expect(block).toContain('location / { return 308 https://$host$request_uri; }');
    expect(block).toContain('server_name localhost 127.0.0.1 190.113.0.10;');
    expect(block).not.toContain('proxy_pass');
    // Credentials sent in clear (a token, a login) are refused, never redirected: the client notices.
    expect(block).toMatch(
      /^ {4}if \(\$http_authorization != ""\) \{ return 403 '\{"jsonrpc":"2\.0","id":null,"error":\{"code":-40100,"message":"credentials sent over plain HTTP are refused: use https on port 443, and change the password or token, which crossed the network in clear"\}\}'; \}$/m,
    );
    expect(block).toMatch(/^ {4}location = \/login \{ return 403 '/m);
    // Other Hosts are still refused on 80; 443 keeps serving the RPC and /login.
    expect(text).toContain('listen 80 default_server;');
    expect(text.match(/proxy_pass /g)).toHaveLength(3);
    expect(text.match(/location = \/login \{\n/g)).toHaveLength(1);
    expect(renderNginxServers({ purpose: 'p', servers: [{ port: 8080, redirectToHttps: 8443 }] })).toContain(
      'return 308 https://$host:8443$request_uri; }',
    );
    expect(() => renderNginxServers({ purpose: 'p', servers: [{ port: 443, tls, redirectToHttps: 443 }] })).toThrow(
      'port 443: a TLS server does not redirect to https',
    );
  });

  it('serves any Host with * and binds to loopback when asked', () => {
    const text = renderNginxServers({
      purpose: 'p',
      servers: [{ port: 443, address: '127.0.0.1', tls }],
      access: { ...access, hosts: ['*'] },
    });
    expect(text).not.toContain('default_server');
    expect(text).toContain('server_name _;');
    expect(text).toContain('listen 127.0.0.1:443 ssl;');
  });
});

const T = {
  secret: 'kubernetes:core/v1:Secret',
  configMap: 'kubernetes:core/v1:ConfigMap',
  statefulSet: 'kubernetes:apps/v1:StatefulSet',
  service: 'kubernetes:core/v1:Service',
};

describe('Kubernetes nodes per choice', () => {
  const declare = (rpc: unknown, extra: Config = {}) => {
    const { config, files } = kubernetesStack('testnet', {
      'lacchain:rpc': rpc,
      'lacchain:companions': companionsForRpc(rpc),
      ...extra,
    });
    return declareProgram(recorded, 'testnet', config, files);
  };
  const servicePorts = (declared: Declared, typenode: string) =>
    inputsOf(declared, T.service, `${typenode}-service`).spec.ports.map((p: any) => `${p.protocol}/${p.port}`);

  it('exposure public: 4545 and the writer 80; tls-only: the writer 80 only; internal: p2p only', async () => {
    const pub = await declare({ exposure: 'public' });
    const tlsOnly = await declare({ exposure: 'tls-only' });
    const internal = await declare({ exposure: 'internal' });
    expect(servicePorts(pub, 'writer')).toEqual(['TCP/60606', 'UDP/60606', 'TCP/4545', 'TCP/80']);
    expect(servicePorts(tlsOnly, 'writer')).toEqual(['TCP/60606', 'UDP/60606', 'TCP/80']);
    expect(servicePorts(tlsOnly, 'validator')).toEqual(['TCP/60606', 'UDP/60606']);
    for (const t of NODE_TYPES) expect(servicePorts(internal, t)).toEqual(['TCP/60606', 'UDP/60606']);
    // In the pod Besu still listens on every address: the probes hit the pod IP with Host: localhost.
    for (const declared of [tlsOnly, internal]) {
      const toml = parseToml(inputsOf(declared, T.configMap, 'writer-config').data['config.toml']) as any;
      expect(toml['rpc-http-host']).toBe('0.0.0.0');
    }
  });

  it('password authentication: a Secret of bcrypt hashes mounted read-only, the pod rolls on a change', async () => {
    const declared = await declare(
      { exposure: 'internal', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
    );
    const secret = resource(declared, T.secret, 'writer-rpc-auth');
    expect(isWrappedSecret(secret.inputs.stringData)).toBe(true);
    const data = inputsOf(declared, T.secret, 'writer-rpc-auth');
    expect(data.metadata.name).toBe('besu-node-writer-rpc-auth');
    expect(parseToml(data.stringData['rpc-credentials.toml'])).toEqual({
      Users: { alice: { password: bcryptHash(PASSWORD, testSalt('writer', 'alice')), permissions: ['*:*'] } },
    });
    expect(secret.options.protect).toBeFalsy();
    const pod = inputsOf(declared, T.statefulSet, 'writer-node').spec.template.spec;
    expect(pod.volumes).toContainEqual({
      name: 'rpc-auth',
      secret: { secretName: 'besu-node-writer-rpc-auth', defaultMode: 0o440 },
    });
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: 'rpc-auth',
      mountPath: '/etc/besu/rpc-auth',
      readOnly: true,
    });
    const toml = parseToml(inputsOf(declared, T.configMap, 'writer-config').data['config.toml']) as any;
    expect(toml['rpc-http-authentication-credentials-file']).toBe('/etc/besu/rpc-auth/rpc-credentials.toml');
    const nginx = inputsOf(declared, T.configMap, 'writer-config').data['nginx.conf'];
    expect(nginx).toContain('location = /login {');
    const other = await declare(
      { exposure: 'internal', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: `${PASSWORD}!` } },
    );
    const checksum = (d: Declared) =>
      inputsOf(d, T.statefulSet, 'writer-node').spec.template.metadata.annotations['lacchain.net/config-checksum'];
    expect(checksum(other)).not.toBe(checksum(declared));
  });

  it('jwt authentication: the public key in the ConfigMap', async () => {
    const declared = await declare({ exposure: 'internal', authentication: { method: 'jwt', publicKey: PUBLIC_KEY } });
    const data = inputsOf(declared, T.configMap, 'writer-config').data;
    expect(data['rpc-jwt-public-key.pem']).toBe(PUBLIC_KEY);
    const toml = parseToml(data['config.toml']) as any;
    expect(toml['rpc-http-authentication-jwt-public-key-file']).toBe('/etc/besu/config/rpc-jwt-public-key.pem');
    expect(declared.resources.some((r) => r.name === 'writer-rpc-auth')).toBe(false);
  });

  it('records the explicit override on every object of the node, and nothing without it', async () => {
    const declared = await declare({ apis: ['ETH', 'NET', 'ADMIN'], allowUnsafeApis: true });
    for (const [type, name] of [
      [T.configMap, 'writer-config'],
      [T.statefulSet, 'writer-node'],
      [T.service, 'writer-service'],
    ]) {
      const meta = inputsOf(declared, type, name).metadata;
      expect(meta.labels['lacchain.net/unsafe-rpc-override']).toBe('true');
      expect(meta.annotations['lacchain.net/unsafe-rpc']).toBe('ADMIN');
    }
    const plain = await declare({ exposure: 'public' });
    expect(inputsOf(plain, T.service, 'writer-service').metadata.labels).not.toHaveProperty(
      'lacchain.net/unsafe-rpc-override',
    );
  });
});

describe('SSH nodes per choice', () => {
  const stack = (rpc: unknown, extra: Config = {}) => ({
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [
      {
        name: 'writer',
        typenode: 'writer',
        target: 'ssh',
        inventory: {
          host: '190.51.100.7',
          host_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHhvc3Qta2V5LW9mLXRoZS13cml0ZXI writer',
          node_ip: '190.51.100.7',
          node_name: 'org-writer',
          node_email: 'ops@example.org',
        },
      },
    ],
    'lacchain:sshPrivateKey': FAKE_SSH_KEY,
    'lacchain:companions': companionsForRpc(rpc),
    'lacchain:nodeKeys': { writer: KEY_ONE },
    'lacchain:rpc': rpc,
    ...extra,
  });
  const declare = (rpc: unknown, extra: Config = {}) => declareProgram(recorded, 'testnet', stack(rpc, extra), {});
  const step = (declared: Declared, name: string) =>
    unwrapSecrets(declared.resources.find((r) => r.name === `writer-${name}`)!.inputs) as Record<string, any>;
  const exported = (declared: Declared, name: string, parameter: string) => {
    const match = new RegExp(`^export ${parameter}='((?:[^']|'\\\\'')*)'$`, 'm').exec(step(declared, name).stdin);
    return match ? match[1].replace(/'\\''/g, "'") : undefined;
  };

  it('public: Besu on every address, the firewall opens 4545, 443 and 80', async () => {
    const declared = await declare({ exposure: 'public' });
    expect(exported(declared, 'firewall', 'TCP_PORTS')).toBe('60606 4545 443 80');
    expect(exported(declared, 'node-files', 'CONFIG_TOML')).toContain('rpc-http-host = "0.0.0.0"');
  });

  it('tls-only: Besu on 127.0.0.1, the firewall opens 443 and 80, not 4545', async () => {
    const declared = await declare({ exposure: 'tls-only' });
    expect(exported(declared, 'firewall', 'TCP_PORTS')).toBe('60606 443 80');
    expect(exported(declared, 'node-files', 'CONFIG_TOML')).toContain('rpc-http-host = "127.0.0.1"');
    const site = exported(declared, 'proxy', 'PROXY_SITE')!;
    expect(site).toContain('listen 443 ssl default_server;');
    expect(site).toContain('server_name localhost 127.0.0.1 190.51.100.7;');
    expect(site).toContain('limit_req_zone $binary_remote_addr zone=lacchain_besu:10m rate=20r/s;');
    // Without authentication the writer's 80 serves the RPC (the gas-model entry point): no redirect.
    expect(site).not.toContain('return 308');
  });

  it('internal: Besu and the proxy on 127.0.0.1, the firewall opens p2p only', async () => {
    const declared = await declare({ exposure: 'internal' });
    expect(exported(declared, 'firewall', 'TCP_PORTS')).toBe('60606');
    expect(exported(declared, 'proxy', 'PROXY_SITE')).toContain('listen 127.0.0.1:443 ssl;');
    expect(exported(declared, 'proxy', 'PROXY_SITE')).toContain('listen 127.0.0.1:80;');
    expect(
      (await (await import('../../tools/recording/engine')).settle(declared.outputs.nodes.writer.rpcUrl!)).value,
    ).toBe('https://127.0.0.1:443');
  });

  it('password authentication: the credentials only in the secret node-key step, triggered by their change', async () => {
    const declared = await declare(
      { exposure: 'tls-only', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
    );
    const hash = bcryptHash(PASSWORD, testSalt('writer', 'alice'));
    for (const r of declared.resources.filter((x) => x.type === 'command:remote:Command')) {
      const stdin = (unwrapSecrets(r.inputs) as any).stdin as string;
      expect(stdin).not.toContain(PASSWORD);
      expect(stdin.includes(hash)).toBe(r.name === 'writer-node-key');
    }
    const keyStep = declared.resources.find((r) => r.name === 'writer-node-key')!;
    expect(isWrappedSecret(keyStep.inputs.stdin)).toBe(true);
    expect(exported(declared, 'node-key', 'RPC_CREDENTIALS_FILE')).toBe('/opt/lacchain/rpc-credentials.toml');
    expect(exported(declared, 'node-files', 'CONFIG_TOML')).toContain(
      'rpc-http-authentication-credentials-file = "/opt/lacchain/rpc-credentials.toml"',
    );
    expect(exported(declared, 'proxy', 'PROXY_SITE')).toContain('location = /login {');
    // The writer's 80 only redirects to 443: no login or token is taken over plain HTTP.
    expect(exported(declared, 'proxy', 'PROXY_SITE')).toContain('return 308 https://$host$request_uri;');
    const changed = await declare(
      { exposure: 'tls-only', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: `${PASSWORD}!` } },
    );
    const again = await declare(
      { exposure: 'tls-only', authentication: passwordAuth },
      { 'lacchain:rpcPasswords': { alice: PASSWORD } },
    );
    const trigger = (d: Declared) => step(d, 'node-key').triggers[0];
    expect(trigger(changed)).not.toBe(trigger(declared));
    expect(trigger(again)).toBe(trigger(declared));
    expect(step(changed, 'node-files')).toEqual(step(declared, 'node-files'));
  });

  it('jwt authentication: the public key written by node-files', async () => {
    const declared = await declare({ exposure: 'tls-only', authentication: { method: 'jwt', publicKey: PUBLIC_KEY } });
    expect(exported(declared, 'node-files', 'RPC_JWT_PUBLIC_KEY_FILE')).toBe('/opt/lacchain/rpc-jwt-public-key.pem');
    expect(exported(declared, 'node-files', 'RPC_JWT_PUBLIC_KEY')).toBe(PUBLIC_KEY);
  });

  it('records the explicit override as a node-files parameter, and nothing without it', async () => {
    const declared = await declare({ apis: ['ETH', 'DEBUG'], corsOrigins: ['*'], allowUnsafeApis: true });
    expect(exported(declared, 'node-files', 'UNSAFE_RPC_OVERRIDE')).toBe('DEBUG,cors:*');
    expect(
      exported(await declare({ apis: ['ETH', 'DEBUG'], exposure: 'internal' }), 'node-files', 'UNSAFE_RPC_OVERRIDE'),
    ).toBeUndefined();
  });
});
