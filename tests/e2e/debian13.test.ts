/**
 * Debian 13 (trixie) for real: a writer installed, updated twice and backed up and restored on a real Debian 13 host
 * (testing/host, LACCHAIN_TEST_SYSTEM=trixie), with Java from the system's own package sources (Debian 13 offers
 * Java 21 and no Java 17: the releases that need 17 run on 21, the ones that need 21 need no pinned runtime). Besu and
 * its companions are stand-ins (test fixtures); systemd, sshd, apt, dpkg, nginx, nftables, podman and restic are
 * Debian 13's own. Its stack stores no SSH private key: `pulumi up` would log in with the operator's ssh agent.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { javaMajorFor } from '../../core/catalog/besu';
import { ETHSTATS, RELAY_SIGNER } from '../../core/catalog/companions';
import { hostSuite, progress } from '../../testing/hostSuite';
import { changedCommands, nodeKeyOf, remoteCommands as commands } from '../../testing/replay';
import { nodeTool, operatorStackFile } from '../../testing/nodeTool';
import { outcome, runNpm } from '../../testing/run';
import { HOME, NODE, provisionedWriter } from '../../testing/sshNodeHost';
import { UPGRADE_PATH } from '../../testing/standinReleases';

const suite = hostSuite('Debian 13 (trixie) end-to-end tests');
jest.setTimeout(10 * 60 * 1000);

/** The install, an update to a 24.x, and one to the newest release the networks can run. */
const [FIRST, NEXT, LATEST] = UPGRADE_PATH;
/** The Java Debian 13's package sources offer (its only one at or above 17 for a headless server by default). */
const SYSTEM_JAVA = 'openjdk-21-jre-headless';

suite('a writer on Debian 13, with the Java of its own package sources', () => {
  const writer = provisionedWriter({
    hostName: 'trixie',
    hostIndex: 55,
    release: FIRST,
    releases: [FIRST, NEXT, LATEST],
    system: 'trixie',
    sshLogin: 'agent',
  });
  const { declare, runAll, sh, rpc, answersWithEnode } = writer;
  const version = async () => (await rpc('web3_clientVersion')).result as string;
  /** Java's major version as `java -version` on the machine's PATH says it. */
  const javaMajor = () => sh("java -version 2>&1 | awk -F'\"' '/version/ { print $2 }' | cut -d. -f1");
  /** A unit's state once it is no longer starting (the relay signer waits for Besu to answer first). */
  const settledState = async (unit: string) => {
    let state = '';
    for (let i = 0; i < 60 && /^(activating|)$/.test((state = await sh(`systemctl is-active ${unit} || true`))); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return state;
  };
  /** The runtime the node's service runs Besu on: its JAVA_HOME, or none (the system's java). */
  const serviceJavaHome = async () => {
    const pid = await sh('systemctl show -p MainPID --value besu');
    return sh(`tr '\\0' '\\n' < /proc/${pid}/environ | sed -n 's/^JAVA_HOME=//p'`);
  };

  it('is a Debian 13 machine whose package sources offer Java 21 and no Java 17', async () => {
    expect(writer.state().host.system).toBe('trixie');
    expect(await sh('. /etc/os-release && echo "$ID $VERSION_ID"')).toBe('debian 13');
    const candidate = (name: string) => sh(`apt-cache policy ${name} | awk '/Candidate:/ { print $2 }'`);
    expect(await candidate('openjdk-17-jre-headless')).toMatch(/^(\(none\))?$/);
    expect(await candidate(SYSTEM_JAVA)).toMatch(/^21\./);
  });

  it('npm run init reads its system over SSH, trusting the pinned host key alone, and writes it as os', async () => {
    const { host } = writer.state();
    const dir = fs.mkdtempSync(path.join(writer.state().work, 'init-'));
    const result = runNpm('init', [
      ...['--stack', 'testnet', '--dir', dir, '--typenode', 'validator', '--target', 'ssh', '--host', host.ip],
      ...['--user', host.sudoUser, '--host-key', host.hostPublicKey, '--ssh-key', host.privateKeyFile],
      ...['--node-name', 'org-validator', '--node-email', 'ops@example.org', '--keygen', 'no'],
    ]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toContain(`os: debian 13 (read from ${host.ip}'s /etc/os-release over SSH)`);
    expect(fs.readFileSync(path.join(dir, 'Pulumi.testnet.yaml'), 'utf8')).toMatch(/^ +os: debian 13$/m);
  });

  it(`installs Besu ${FIRST} (Java ${javaMajorFor(FIRST)}) on the system's Java 21, with no pinned runtime`, async () => {
    expect(await sh(`dpkg-query -W -f='\${Status}' ${SYSTEM_JAVA}`)).toBe('install ok installed');
    expect(await javaMajor()).toBe('21');
    expect(await sh('test -e /opt/lacchain-java && echo pinned || echo none')).toBe('none');
    expect(await sh('systemctl is-active besu')).toBe('active');
    expect(await version()).toMatch(new RegExp(`^besu/v${FIRST.replace(/\./g, '\\.')}/`));
    expect(await answersWithEnode()).toBe(writer.state().enode);
    expect(await serviceJavaHome()).toBe('');
    // The companions and the proxy run on Debian 13's own nginx, nftables and podman.
    for (const unit of ['nginx', `besu-${RELAY_SIGNER.name}`, `besu-${ETHSTATS.name}`]) {
      expect([unit, await settledState(unit)]).toEqual([unit, 'active']);
    }
  });

  it("was deployed from a stack that stores no SSH key: pulumi up's login is the agent, no key in any step", async () => {
    // What this shows: the stack declares and its steps deploy (replayed over the test host's own ssh, as in every
    // suite here) without lacchain:sshPrivateKey. The command provider's own login through SSH_AUTH_SOCK is not run
    // here; what is, is that an ssh agent holding the key, and nothing else, logs in to this machine as the login user.
    expect(writer.stack(FIRST)).not.toHaveProperty(['lacchain:sshPrivateKey']);
    const { first, host, work } = writer.state();
    expect(first.loaded.settings.sshAuthentication).toBe('agent');
    expect(first.loaded.secrets.sshPrivateKey).toBeUndefined();
    const steps = commands(first);
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps) {
      expect([step.name, Object.keys(step.inputs.connection).sort()]).toEqual([
        step.name,
        ['dialErrorLimit', 'host', 'hostKey', 'perDialTimeout', 'port', 'user'],
      ]);
    }
    const socket = path.join(work, 'agent.sock');
    const agent = spawnSync('ssh-agent', ['-a', socket], { encoding: 'utf8' });
    expect(agent.status).toBe(0);
    const agentPid = /SSH_AGENT_PID=(\d+)/.exec(agent.stdout)![1];
    try {
      const withAgent = { ...process.env, SSH_AUTH_SOCK: socket };
      expect(spawnSync('ssh-add', [host.privateKeyFile], { env: withAgent, encoding: 'utf8' }).status).toBe(0);
      // The test host's ssh options, without its key file: only the agent can log in.
      const pairs = host.sshOptions.flatMap((option, i, all) => (i % 2 === 0 ? [[option, all[i + 1]]] : []));
      const options = pairs.filter(([flag, value]) => flag !== '-i' && value !== 'IdentitiesOnly=yes').flat();
      const login = (env: NodeJS.ProcessEnv) =>
        spawnSync('ssh', [...options, '-o', 'IdentityFile=/dev/null', `${host.sudoUser}@${host.ip}`, 'sudo -n true'], {
          env,
          encoding: 'utf8',
          timeout: 60_000,
        }).status;
      expect(login(withAgent)).toBe(0);
      expect(login({ ...process.env, SSH_AUTH_SOCK: '' })).not.toBe(0);
    } finally {
      process.kill(Number(agentPid));
    }
  });

  it(`updates to ${NEXT}, then to ${LATEST} (Java 21): the system's Java still, the identity and data kept`, async () => {
    let previous = writer.state().first;
    for (const release of [NEXT, LATEST]) {
      const next = await declare(release);
      const changed = changedCommands(commands(previous), commands(next));
      progress(`update to ${release}: ${changed.map((s) => s.name).join(', ')}`);
      expect(changed.map((s) => s.name)).toEqual(expect.arrayContaining([`${NODE}-release`, `${NODE}-start`]));
      const head = Number((await rpc('eth_blockNumber')).result);
      await runAll(changed);
      expect(await version()).toMatch(new RegExp(`^besu/v${release.replace(/\./g, '\\.')}/`));
      expect(await answersWithEnode()).toBe(writer.state().enode);
      expect(Number((await rpc('eth_blockNumber')).result)).toBeGreaterThanOrEqual(head);
      previous = next;
    }
    expect(await javaMajor()).toBe('21');
    expect(await sh('test -e /opt/lacchain-java && echo pinned || echo none')).toBe('none');
    expect(await serviceJavaHome()).toBe('');
    expect(await sh(`readlink ${HOME}/releases/previous`)).toBe(`${HOME}/releases/besu-${NEXT}`);
  });

  describe("backup and restore with npm run node (Debian 13's restic)", () => {
    /** A file of the node's data the tests write: which data a restore brought back tells by it. */
    const MARKER = `${HOME}/data/restore-marker`;
    let keyFile: string;
    let node: ReturnType<typeof nodeTool>;

    beforeAll(() => {
      const { work, host } = writer.state();
      node = nodeTool(operatorStackFile(work, writer.stack(LATEST)), host.privateKeyFile);
      keyFile = path.join(writer.state().work, 'writer.key');
      fs.writeFileSync(keyFile, nodeKeyOf(commands(writer.state().first)), { mode: 0o600 });
    });

    it('took a backup before each release change, then takes one on request', async () => {
      const listed = await node('backups');
      expect(outcome(listed)).toBe('exit 0');
      expect(listed.stdout.match(/ before-release-change$/gm)).toHaveLength(2);
      // A file of the node's data written before this backup (as the service user): the restore must bring it back.
      await sh(`runuser -u besu -- sh -c 'printf %s before-the-backup >${MARKER}'`);
      const taken = await node('backup');
      expect(outcome(taken)).toBe('exit 0');
      expect(taken.stdout).toMatch(/backup [0-9a-f]{8} taken in .*: Besu 25\.5\.0, head \d+/);
      expect(await sh('systemctl is-active besu')).toBe('active');
    });

    it("restores after data/ is gone: the backup's own data (its marker, changed after it), the same enode, the head at least the backup's", async () => {
      const newest = (await node('backups')).stdout.split('\n').find((line) => /^ {2}[0-9a-f]{8} /.test(line))!;
      const at = Number(newest.trim().split(/ +/)[5]);
      expect(at).toBeGreaterThan(0);
      await sh(`runuser -u besu -- sh -c 'printf %s after-the-backup >${MARKER}'`);
      await sh(`systemctl stop besu && rm -rf ${HOME}/data`);
      const restored = await node('restore', '--key-file', keyFile);
      expect(outcome(restored)).toBe('exit 0');
      expect(await answersWithEnode()).toBe(writer.state().enode);
      expect(Number((await rpc('eth_blockNumber')).result)).toBeGreaterThanOrEqual(at);
      expect(await sh(`cat ${MARKER}`)).toBe('before-the-backup');
      expect(await sh(`stat -c '%U:%G %a' ${HOME}/data ${HOME}/data/key`)).toBe('besu:besu 750\nbesu:besu 600');
    });
  });
});
