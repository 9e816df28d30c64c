/**
 * The companions step (scripts/remote/companions.sh) run here with bash, as root, against throwaway folders: a failed
 * command inside it stops it before any service is (re)started, a `companions` symlink the service user planted is
 * never followed, and a relay signer that answers on any address of the machine fails it. systemctl, curl, ip and
 * (where a test breaks one) ln and mv are stand-ins (a PATH of small scripts); /etc/systemd/system and
 * /etc/logrotate.d are empty folders of the step's own mount namespace. The relay signer's fence itself is loaded in
 * a network namespace of its own, where nft is installed. The end-to-end suites run the step on a real host.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { RELAY_SIGNER } from '../../core/catalog/companions';
import { PROXY_WORKER_USER } from '../../core/catalog/remote';
import { stepCommand } from '../../core/remote/shell';
import { remoteStepInput } from '../../testing/remoteStep';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-companions-step-');
const has = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const asRoot = process.getuid?.() === 0 && has('unshare') && has('runuser');
if (!asRoot) console.warn('companions step tests skipped: they need root, unshare and runuser');

const EXECUTABLE = '#!/bin/sh\necho relay signer\n';
const SHA256 = createHash('sha256').update(EXECUTABLE).digest('hex');
/** The id git gives a file's content as a blob (as `git hash-object` prints it), computed here independently. */
const gitBlobId = (content: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(content)}\0${content}`)
    .digest('hex');
const PORT = String(RELAY_SIGNER.port);

/** A stand-in command: a bash script in the stage's PATH. */
const standIn = (bin: string, name: string, body: string) =>
  fs.writeFileSync(path.join(bin, name), `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });

let stages = 0;
/**
 * A node home, a PATH of stand-ins, and the step run as the command provider runs it. curl downloads EXECUTABLE and,
 * for the fence check, answers at the addresses ANSWERING names; `ip` shows one IPv4 and one IPv6 global address.
 */
function stage() {
  const root = path.join(work, `stage-${++stages}`);
  const home = path.join(root, 'home');
  const bin = path.join(root, 'bin');
  fs.mkdirSync(path.join(home, 'bin'), { recursive: true });
  fs.mkdirSync(bin);
  const systemctlLog = path.join(root, 'systemctl.log');
  standIn(bin, 'systemctl', `echo "$*" >>'${systemctlLog}'\ncase "$1" in is-active) exit 3 ;; esac`);
  standIn(
    bin,
    'curl',
    [
      'out="" url="${*: -1}"',
      'while [ "$#" -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done',
      `if [ "$out" != /dev/null ]; then printf '%s' '${EXECUTABLE}' >"$out"; exit 0; fi`,
      'for address in $ANSWERING; do case "$url" in *"//$address:"* | *"//[$address]:"*) exit 0 ;; esac; done',
      'exit 7',
    ].join('\n'),
  );
  standIn(
    bin,
    'ip',
    [
      "echo '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever'",
      "echo '2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\\       valid_lft forever'",
      "echo '2: eth0    inet6 2001:db8::5/64 scope global \\       valid_lft forever'",
    ].join('\n'),
  );
  const companions = path.join(home, 'companions');
  const relaySigner = path.join(companions, 'relay-signer');
  /** Runs the step; a parameter given as undefined is left out. */
  const run = (changes: Record<string, string | undefined> = {}, answering = '127.0.0.1') => {
    const env = Object.fromEntries(
      Object.entries(changes).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    const removed = Object.keys(changes).filter((name) => changes[name] === undefined);
    const parameters: Record<string, string> = {
      NODE_HOME: home,
      SERVICE_NAME: 'besu',
      SERVICE_USER: 'nobody',
      COMPANIONS: 'relay-signer',
      KNOWN_COMPANIONS: 'relay-signer rotation-validator',
      COMPANIONS_DIR: companions,
      LAUNCHER: '#!/bin/sh\n',
      LAUNCHER_FILE: path.join(home, 'bin', 'start-companion.sh'),
      CONTAINER_LAUNCHER: '#!/bin/sh\n',
      CONTAINER_LAUNCHER_FILE: path.join(home, 'bin', 'start-container-companion.sh'),
      WEBSOCKET_FENCE_FILE: path.join(companions, 'websocket-fence.nft'),
      LOGROTATE_CONF: '# rotation\n',
      NODE_IP: '190.113.0.7',
      WEBSOCKET_FENCE: '# websocket fence\n',
      RELAY_SIGNER_UNIT: '[Service]\n',
      RELAY_SIGNER_VERSION: '1.0.1',
      RELAY_SIGNER_URL: 'https://example.org/gas-relay-signer',
      RELAY_SIGNER_SHA256: SHA256,
      RELAY_SIGNER_EXECUTABLE: 'gas-relay-signer',
      RELAY_SIGNER_CONFIG: '# config\n',
      RELAY_SIGNER_PORT: PORT,
      RELAY_SIGNER_FENCE: '# fence\n',
      RELAY_SIGNER_FENCE_FILE: path.join(relaySigner, 'fence.nft'),
      RELAY_SIGNER_RELEASES_DIR: path.join(relaySigner, 'releases'),
      RELAY_SIGNER_LOG_DIR: path.join(relaySigner, 'log'),
      RELAY_SIGNER_CONFIG_FILE: path.join(relaySigner, 'config.toml'),
      ...env,
    };
    for (const name of removed) delete parameters[name];
    const input = remoteStepInput('companions', parameters);
    // The step's own mount namespace: the unit and logrotate files go to empty folders, not this machine's.
    const isolated = `unshare -m sh -c 'mount -t tmpfs tmpfs /etc/systemd/system && mount -t tmpfs tmpfs /etc/logrotate.d && exec ${stepCommand('root').replace(/'/g, `'\\''`)}'`;
    const result = spawnSync('sh', ['-c', isolated], {
      input,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ANSWERING: answering },
      timeout: 60_000,
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const systemctl = () => (fs.existsSync(systemctlLog) ? fs.readFileSync(systemctlLog, 'utf8') : '');
  return { root, home, bin, run, systemctl };
}

(asRoot ? describe : describe.skip)('the companions step', () => {
  it('installs the relay signer and starts it once its fence is in place', () => {
    const s = stage();
    const result = s.run();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(fs.readFileSync(path.join(s.home, 'companions', 'relay-signer', 'fence.nft'), 'utf8')).toBe('# fence\n');
    expect(fs.readFileSync(path.join(s.home, 'companions', 'websocket-fence.nft'), 'utf8')).toBe('# websocket fence\n');
    expect(s.systemctl()).toContain('restart besu-relay-signer');
    expect(result.stdout).toContain('besu-relay-signer answers on the loopback only');
  });

  it('installs a catalog release checked by the git blob id alone (no SHA-256): the id computed without git', () => {
    const s = stage();
    const result = s.run({ RELAY_SIGNER_SHA256: undefined, RELAY_SIGNER_GIT_BLOB: gitBlobId(EXECUTABLE) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const installed = path.join(s.home, 'companions', 'relay-signer', 'releases', '1.0.1', 'gas-relay-signer');
    expect(fs.readFileSync(installed, 'utf8')).toBe(EXECUTABLE);
    expect(s.systemctl()).toContain('restart besu-relay-signer');
  });

  it.each([
    ['the git blob id alone', { RELAY_SIGNER_SHA256: undefined }],
    ['the git blob id beside a right SHA-256', {}],
  ])("refuses a download that is not the catalog's file, checked by %s: nothing installed", (_, changes) => {
    const s = stage();
    const pinned = gitBlobId('#!/bin/sh\necho the real relay signer\n');
    const result = s.run({ ...changes, RELAY_SIGNER_GIT_BLOB: pinned });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `has git blob id ${gitBlobId(EXECUTABLE)}, not the catalog's ${pinned}: gas-relay-signer 1.0.1 not installed, nothing changed`,
    );
    expect(fs.existsSync(path.join(s.home, 'companions', 'relay-signer', 'releases', '1.0.1'))).toBe(false);
    expect(s.systemctl()).not.toMatch(/restart|start besu-relay-signer/);
  });

  it('refuses a released companion given no pin at all', () => {
    const s = stage();
    const result = s.run({ RELAY_SIGNER_SHA256: undefined });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gas-relay-signer 1.0.1 has no pinned digest: not installed');
    expect(s.systemctl()).not.toMatch(/restart|start besu-relay-signer/);
  });

  it.each([
    ['the `current` link cannot be made', 'ln', 'exit 1'],
    [
      'its fence.nft is half-written',
      'mv',
      `case "\${*: -1}" in *fence.nft) exit 1 ;; esac\nexec ${'$(type -P mv)'} "$@"`,
    ],
  ])('stops, restarting nothing, when %s', (_, command, body) => {
    const s = stage();
    const real = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
    standIn(s.bin, command, body.replace('$(type -P mv)', real));
    const result = s.run();
    expect(result.code).not.toBe(0);
    expect(s.systemctl()).not.toMatch(/restart|start besu-relay-signer/);
    expect(result.stdout).not.toContain('(re)started');
  });

  it('never follows a `companions` symlink the service user planted', () => {
    const s = stage();
    const elsewhere = path.join(s.root, 'elsewhere');
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(s.home, 'companions'));
    const nobody = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
    fs.lchownSync(path.join(s.home, 'companions'), nobody, nobody);
    const result = s.run();
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`removed a symlink ${s.home}/companions that root did not make`);
    expect(fs.lstatSync(path.join(s.home, 'companions')).isDirectory()).toBe(true);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it.each(['10.0.0.5', '2001:db8::5', '190.113.0.7'])(
    'fails when the relay signer answers on %s, an address of the machine other than the loopback',
    (address) => {
      const s = stage();
      const result = s.run({}, `127.0.0.1 ${address}`);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `besu-relay-signer answers on port ${PORT} at ${address}, not on the loopback only`,
      );
    },
  );
});

const canFence = asRoot && has('nft') && has('python3');
if (asRoot && !canFence) console.warn("the relay signer's fence test skipped: it needs nft and python3");
(canFence ? describe : describe.skip)("the relay signer's fence, loaded in a network namespace of its own", () => {
  it("lets root and the proxy's user reach its port on the loopback, and no other user", async () => {
    const { companionFence } = await import('../../core/remote/companionService');
    const fence = companionFence(
      { nodeName: 'n', serviceName: 'besu' } as never,
      {
        port: RELAY_SIGNER.port,
        settings: { name: RELAY_SIGNER.name },
      } as never,
    )!;
    const file = path.join(work, 'fence.nft');
    fs.writeFileSync(file, fence);
    const connect = (user: string) =>
      `runuser -u ${user} -- bash -c 'exec 3<>/dev/tcp/127.0.0.1/${PORT}' 2>/dev/null && echo "${user} reaches" || echo "${user} refused"`;
    const result = spawnSync(
      'unshare',
      [
        '-n',
        'bash',
        '-c',
        [
          'set -e',
          'ip link set lo up',
          `nft -f ${file}`,
          `python3 -c 'import socket,time; s=socket.socket(); s.bind(("0.0.0.0", ${PORT})); s.listen(8); time.sleep(5)' &`,
          'sleep 1',
          connect('root'),
          connect(PROXY_WORKER_USER),
          connect('nobody'),
        ].join('\n'),
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(result.stdout.trim().split('\n')).toEqual([
      'root reaches',
      `${PROXY_WORKER_USER} reaches`,
      'nobody refused',
    ]);
  });
});

describe("the companions step's pull of a container companion's image (pull_image)", () => {
  const script = fs.readFileSync(path.join(__dirname, '../../scripts/remote/companions.sh'), 'utf8');
  const pullImage = /^pull_image\(\) \{[\s\S]*?^\}$/m.exec(script)![0];
  const DIGEST_IMAGE = `docker.io/alethio/ethstats-cli@sha256:${'5e'.repeat(32)}`;
  const TAG_IMAGE = 'docker.io/alethio/ethstats-cli:latest';

  /** Runs the step's own function with a podman stand-in that has no image and records what it is asked. */
  function pull(image: string, byTag: string) {
    const root = fs.mkdtempSync(path.join(work, 'pull-'));
    const log = path.join(root, 'podman.log');
    standIn(root, 'podman', `echo "$*" >>'${log}'\ncase "$1" in image) exit 1 ;; esac`);
    const result = spawnSync(
      'bash',
      [
        '-c',
        [
          'set -euo pipefail',
          'fail() { echo "companions: $*" >&2; exit 1; }',
          pullImage,
          'changed=false',
          `pull_image '${image}' '${byTag}'`,
          'echo "changed=$changed"',
        ].join('\n'),
      ],
      { encoding: 'utf8', env: { ...process.env, PATH: `${root}:${process.env.PATH}` } },
    );
    const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
    return { code: result.status, stdout: result.stdout, stderr: result.stderr, calls };
  }

  it('pulls an image pinned by its digest', () => {
    const result = pull(DIGEST_IMAGE, '');
    expect(result.code).toBe(0);
    expect(result.calls).toEqual([`image exists ${DIGEST_IMAGE}`, `pull --quiet ${DIGEST_IMAGE}`]);
    expect(result.stdout).toContain('changed=true');
  });

  it('refuses a tag unless the step is told the network takes it (a test network), pulling nothing', () => {
    const result = pull(TAG_IMAGE, '');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`refusing ${TAG_IMAGE}: an image is pulled by its digest (@sha256:) only`);
    expect(result.calls).toEqual([]);
  });

  it('pulls the tag on a test network (IMAGE_BY_TAG=yes), saying it can be moved', () => {
    const result = pull(TAG_IMAGE, 'yes');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `companions: ${TAG_IMAGE} runs by its tag, which can be moved (test networks only)`,
    );
    expect(result.calls).toEqual([`image exists ${TAG_IMAGE}`, `pull --quiet ${TAG_IMAGE}`]);
  });
});
