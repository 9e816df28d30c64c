/**
 * The SSH path end to end, on a real Debian host (systemd, sshd, apt, nginx, openssl) built inside the test.
 * The program is declared as `pulumi up` declares it; the remote commands it declares are then run over real SSH,
 * in the same order, with the same command and the same standard input as remote.Command sends them. Besu itself
 * cannot be downloaded here, so the release archive served to the host holds the Besu stand-in (a test fixture); the
 * relay signer and the monitoring client (its image, from a registry the test runs) are stand-ins too, as is the
 * network's monitoring server.
 */
import * as https from 'https';
import * as http from 'http';
import * as tls from 'tls';
import * as fs from 'fs';
import * as path from 'path';
import { declareProgram, Declared } from '../../testing/program';
import { sha256Hex } from '../../core/genesis';
import { RELEASE_ARCHIVE_SHA256 } from '../../core/catalog/besu';
import { stepCommand } from '../../core/remote/shell';
import { PORTS } from '../../core/catalog/ports';
import { ETHSTATS, RELAY_SIGNER } from '../../core/catalog/companions';
import { GAS_MODEL_METHODS } from '../../core/catalog/gasModel';
import { NETWORKS } from '../../core/catalog/networks';
import { NODE_KEY_PARAMETER, REMOTE_STEP_NAMES } from '../../core/remote/steps';
import type { TestHost } from '../../testing/host/testHost';
import { connectsAs, withLoopbackListener } from '../../testing/host/loopbackProbe';
import type { EthstatsServer } from '../../testing/ethstatsServer';
import type { MonitoringStandins } from '../../testing/monitoringStandins';
import type { ImageRegistry } from '../../testing/imageRegistry';
import type { FileServer } from '../../testing/host/fileServer';
import { changedCommands, nodeKeyOf, remoteCommands as commands, RemoteStep } from '../../testing/replay';
import { hostSuite, progress } from '../../testing/hostSuite';
import { packStandinReleases, startReleaseServer, UPGRADE_PATH } from '../../testing/standinReleases';
import { sshWriterStack } from '../../testing/sshStacks';
import { testGenesisText } from '../../testing/fixtures';
import { JAVA_STANDIN_ARCHIVE, packJavaStandin } from '../../testing/javaStandin';
import { outcome } from '../../testing/run';
import { request } from '../../testing/nginx';
import { nodeTool, operatorStackFile } from '../../testing/nodeTool';
import { createHash, X509Certificate } from 'crypto';
import { tlsIdentityOf } from '../../core/remote/tlsIdentity';
import { answeredPushAt, PushGateway, seriesNames } from '../../testing/pushGateway';
import { rulesHeldFor, startPrometheus, TestPrometheus } from '../../testing/prometheus';
import { probeTcp } from '../../cli/operations/probe';
import { METRICS } from '../../core/catalog/metrics';
import { NO_PEERS_FOR_MINUTES } from '../../core/catalog/health';
import { prometheusConfig } from '../../core/monitoring/prometheusConfig';
import { MONITORING_DIR } from '../../core/monitoring/files';
import { PROJECT_DIR } from '../../testing/run';
import { HOME, METRICS_TOKEN, NODE, provisionedWriter } from '../../testing/sshNodeHost';
import { permissioned } from '../../testing/permissioning';

const suite = hostSuite('SSH end-to-end tests');
jest.setTimeout(15 * 60 * 1000);

const [FIRST, NEXT, LATEST] = UPGRADE_PATH;
/** A release whose archive the tests serve (the 24.1.0 stand-in under its name) but never unpack. */
const UNPACKED = '24.1.2';
/** A drop-in of the node's unit that the backup tests write to make its start fail. */
const FAILING_START = {
  dir: '/etc/systemd/system/besu.service.d',
  file: '/etc/systemd/system/besu.service.d/test-failing-start.conf',
};

suite('an SSH node on a real host', () => {
  const writer = provisionedWriter({
    hostName: 'sshnode',
    hostIndex: 41,
    release: FIRST,
    releases: [FIRST, NEXT],
    aliases: { [UNPACKED]: NEXT },
  });
  const { stack, run, runAll, sh, rpc, register, permission, hasPeer, answersWithEnode, unitState, recorded } = writer;
  let host: TestHost;
  let files: FileServer;
  let standins: MonitoringStandins;
  let registry: ImageRegistry;
  let monitor: EthstatsServer;
  let gateway: PushGateway;
  let work: string;
  let first: Declared;
  let enode: string;
  let address: string;
  /** The declaration of the node as it runs after the update (release NEXT). */
  const current = () => writer.declare(NEXT);
  /** The node's stack on release LATEST, its Java runtime served by the test (the archive's digest given). */
  const latestStack = (javaSha256: string) =>
    sshWriterStack(host, {
      version: LATEST,
      releaseBaseUrl: files.url,
      releaseDir: work,
      nodeName: 'e2e-writer',
      dnsName: 'writer.e2e.test',
      ethstats: standins.ethstats,
      javaRuntime: { url: `${files.url}/${JAVA_STANDIN_ARCHIVE}`, sha256: javaSha256 },
    });
  /** The same node with one companion's settings replaced. */
  const withCompanion = (companion: string, settings: Record<string, unknown>) =>
    declareProgram(
      recorded,
      'testnet',
      {
        ...stack(NEXT),
        'lacchain:companions': {
          ...(stack(NEXT)['lacchain:companions'] as Record<string, unknown>),
          [companion]: settings,
        },
      },
      {},
    );

  /** The settled state and whether the unit is enabled, one a line. */
  const settledState = async (unit: string) => `${await unitState(unit)}\n${await sh(`systemctl is-enabled ${unit}`)}`;

  beforeAll(() => {
    ({ host, files, standins, registry, monitor, gateway, work, first, enode, address } = writer.state());
  });

  it('declares the steps in order, logging in as the configured user with the pinned host key', () => {
    const steps = commands(first);
    expect(steps.map((s) => s.name)).toEqual(REMOTE_STEP_NAMES.map((s) => `${NODE}-${s}`));
    for (const step of steps) {
      expect(step.create).toBe(stepCommand(host.sudoUser));
      expect(step.inputs.connection).toEqual({
        host: host.ip,
        port: 22,
        user: 'operator',
        privateKey: host.privateKey,
        hostKey: host.hostPublicKey,
        dialErrorLimit: 10,
        perDialTimeout: 15,
      });
      expect(step.inputs.addPreviousOutputInEnv).toBe(false);
      expect(step.inputs.environment).toBeUndefined();
    }
  });

  it('sends the node key only to the node-key step, with logging off', () => {
    const steps = commands(first);
    const keyStep = steps.find((s) => s.name === `${NODE}-node-key`)!;
    const secretKey = nodeKeyOf(steps);
    expect(keyStep.inputs.logging).toBe('none');
    expect(first.resources.find((r) => r.name === `${NODE}-node-key`)!.inputs.stdin).toHaveProperty([
      '4dabf18193072939515e22adb298388d',
    ]);
    for (const step of steps.filter((s) => s !== keyStep)) expect(step.stdin).not.toContain(secretKey.slice(2));
    // A secret parameter: set in the step's shell, never exported to the commands it runs.
    expect(keyStep.stdin).toMatch(new RegExp(`^${NODE_KEY_PARAMETER}='0x[0-9a-f]{64}'$`, 'm'));
    expect(keyStep.stdin).not.toContain(`export ${NODE_KEY_PARAMETER}=`);
  });

  it('writes the node files with the right owners and modes', async () => {
    expect(await sh(`stat -c '%U:%G %a' ${HOME}/data/key`)).toBe('besu:besu 600');
    expect(await sh(`stat -c '%U:%G %a' ${HOME}/config.toml`)).toBe('root:besu 640');
    // The home is root's: only the folders Besu writes belong to the service user.
    expect(await sh(`stat -c '%U:%G %a' ${HOME} ${HOME}/data ${HOME}/logs`)).toBe(
      'root:besu 750\nbesu:besu 750\nbesu:besu 750',
    );
    expect(await sh(`stat -c '%U:%G' ${HOME}/bin ${HOME}/releases ${HOME}/releases/besu-${FIRST}/bin/besu`)).toBe(
      'root:root\nroot:root\nroot:root',
    );
    expect(await sh(`cat ${HOME}/data/nodeAddress`)).toBe(address);
    expect(await sh(`sha256sum < ${HOME}/data/genesis.json | cut -d' ' -f1`)).toBe(sha256Hex(testGenesisText()));
    expect(await sh(`readlink ${HOME}/releases/current`)).toBe(`${HOME}/releases/besu-${FIRST}`);
    expect(await sh(`grep -c '^p2p-host = "${host.ip}"' ${HOME}/config.toml`)).toBe('1');
    expect(await sh('java -version 2>&1 | head -n 1')).toMatch(/version "(17|21)/);
  });

  it('runs the node as an enabled systemd service that answers with the identity of the stack', async () => {
    expect(await sh('systemctl is-active besu')).toBe('active');
    expect(await sh('systemctl is-enabled besu')).toBe('enabled');
    expect((await rpc('net_enode')).result).toBe(enode);
    expect((await rpc('eth_coinbase')).result).toBe(address);
    expect(await sh(`test -s ${HOME}/logs/besu_info.log && echo yes`)).toBe('yes');
  });

  it('serves the RPC over TLS 1.2+ on 443 from outside, with the certificate names', async () => {
    const answer = await new Promise<{ body: string; cert: tls.PeerCertificate; protocol: string | null }>(
      (resolve, reject) => {
        const request = https.request(
          {
            host: host.ip,
            port: 443,
            method: 'POST',
            path: '/',
            rejectUnauthorized: false,
            headers: { 'content-type': 'application/json' },
          },
          (response) => {
            // Read the TLS facts now: the socket goes back to the agent when the response ends.
            const socket = response.socket as tls.TLSSocket;
            const cert = socket.getPeerCertificate();
            const protocol = socket.getProtocol();
            let body = '';
            response.on('data', (chunk) => (body += chunk));
            response.on('end', () => resolve({ body, cert, protocol }));
          },
        );
        request.setTimeout(10_000, () => request.destroy(new Error('no answer on 443 within 10 s')));
        request.on('error', reject);
        request.end('{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}');
      },
    );
    expect(JSON.parse(answer.body).result).toBe(enode);
    expect(answer.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(answer.cert.subjectaltname).toBe(
      `IP Address:${host.ip}, DNS:writer.e2e.test, DNS:localhost, IP Address:127.0.0.1`,
    );
    expect(answer.cert.bits).toBe(2048);
    const oldTls = await new Promise<string>((resolve) => {
      const socket = tls.connect({
        host: host.ip,
        port: 443,
        rejectUnauthorized: false,
        minVersion: 'TLSv1',
        maxVersion: 'TLSv1.1',
        ciphers: 'DEFAULT@SECLEVEL=0',
      });
      socket.setTimeout(10_000, () => socket.destroy(new Error('timed out')));
      socket.on('secureConnect', () => {
        resolve(`connected with ${socket.getProtocol()}`);
        socket.end();
      });
      socket.on('error', (error) => resolve(`refused: ${error.message}`));
      socket.on('close', () => resolve('refused: closed'));
    });
    expect(oldTls).toMatch(/^refused/);
  });

  it("serves the writer's entry point on 80 and RPC on 4545 from outside", async () => {
    const post = (port: number) =>
      request(port, '{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}', { address: host.ip });
    expect(JSON.parse((await post(80)).body).result).toBe(enode);
    expect(JSON.parse((await post(4545)).body).result).toBe(enode);
  });

  it('declares no step to run again when nothing changed, and the steps before start, run again, change nothing', async () => {
    const again = await declareProgram(recorded, 'testnet', stack(FIRST), {});
    const before = commands(first);
    const changed = changedCommands(before, commands(again));
    expect(changed.map((s) => s.name)).toEqual([]);
    // And the scripts themselves are idempotent: running the steps before start again changes nothing.
    const pid = await sh('systemctl show -p MainPID --value besu');
    for (const step of before.filter((s) => !s.name.endsWith('-start'))) {
      const result = await run(step);
      expect({ step: step.name, code: result.code }).toEqual({ step: step.name, code: 0 });
      expect(result.stdout).not.toMatch(/wrote|made a self-signed|unpacked|created service user/);
    }
    expect(await sh('systemctl show -p MainPID --value besu')).toBe(pid);
  });

  it('has systemd restart a killed node', async () => {
    const pid = await sh('systemctl show -p MainPID --value besu');
    await sh('systemctl kill -s KILL besu');
    let now = pid;
    for (let i = 0; i < 60 && (now === pid || now === '0'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      now = await sh('systemctl show -p MainPID --value besu');
    }
    expect(now).not.toBe(pid);
    expect(now).not.toBe('0');
    expect(await answersWithEnode()).toBe(enode);
  });

  it("updates the release: the new one declares only preflight's check, release and start again, and they update it; identity and data are kept; the previous release stays", async () => {
    const keyBefore = await sh(`sha256sum ${HOME}/data/key`);
    const heightBefore = Number((await rpc('eth_blockNumber')).result);
    const next = await declareProgram(recorded, 'testnet', stack(NEXT), {});
    const before = commands(first);
    const changed = changedCommands(before, commands(next));
    expect(changed.map((s) => s.name)).toEqual([`${NODE}-preflight`, `${NODE}-release`, `${NODE}-start`]);
    await runAll(changed);
    expect((await rpc('web3_clientVersion')).result).toMatch(new RegExp(`^besu/v${NEXT}/`));
    expect((await rpc('net_enode')).result).toBe(enode);
    expect(await sh(`readlink ${HOME}/releases/current`)).toBe(`${HOME}/releases/besu-${NEXT}`);
    expect(await sh(`readlink ${HOME}/releases/previous`)).toBe(`${HOME}/releases/besu-${FIRST}`);
    expect(await sh(`test -x ${HOME}/releases/besu-${FIRST}/bin/besu && echo kept`)).toBe('kept');
    expect(await sh(`sha256sum ${HOME}/data/key`)).toBe(keyBefore);
    expect(Number((await rpc('eth_blockNumber')).result)).toBeGreaterThanOrEqual(heightBefore);

    // Going back is refused: a downgrade can corrupt the database.
    const start = before.find((s) => s.name === `${NODE}-start`)!;
    const back = await run(start);
    expect(back.code).not.toBe(0);
    expect(back.stderr).toMatch(/refusing to go back from Besu 24\.1\.0 to 23\.4\.1/);
  });

  it('fails the start step, showing both values, when the node answers another enode', async () => {
    const next = await declareProgram(recorded, 'testnet', stack(NEXT), {});
    const start = commands(next).find((s) => s.name === `${NODE}-start`)!;
    const other = enode.replace(/^enode:\/\/./, 'enode://f');
    const result = await run({
      ...start,
      stdin: start.stdin.replace(`EXPECTED_ENODE='${enode}'`, `EXPECTED_ENODE='${other}'`),
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`the node answers enode ${enode} but the stack's identity is ${other}`);
  });

  it('refuses to start the node without its key instead of creating a new identity', async () => {
    // Until systemd has given up on it (the launcher's refusal is not restarted).
    await sh(
      `mv ${HOME}/data/key /root/key.saved && systemctl restart besu; ` +
        'for i in $(seq 50); do systemctl is-failed --quiet besu && break; sleep 0.1; done',
    );
    try {
      expect(await sh('systemctl is-active besu || true')).not.toBe('active');
      expect(await sh('systemctl show -p ExecMainStatus --value besu')).toBe('78');
      expect(await sh(`test -e ${HOME}/data/key && echo present || echo absent`)).toBe('absent');
      expect(await sh('journalctl -u besu --no-pager | tail -n 20')).toMatch(
        /refusing to start Besu with a new identity/,
      );
    } finally {
      // Whatever was found, the node gets its key back for the tests after this one.
      await sh(`mv /root/key.saved ${HOME}/data/key && systemctl restart besu`);
    }
    expect(await answersWithEnode()).toBe(enode);
  });

  it('refuses a release archive whose SHA-256 is not the pinned one, showing both, and changes nothing', async () => {
    const releaseStep = (steps: RemoteStep[]) => steps.find((s) => s.name === `${NODE}-release`)!;
    const step = releaseStep(commands(await declareProgram(recorded, 'testnet', stack(UNPACKED), {})));
    const published = RELEASE_ARCHIVE_SHA256[UNPACKED];
    const pinned = step.stdin.replace(/RELEASE_SHA256='[0-9a-f]{64}'/, `RELEASE_SHA256='${published}'`);
    const listing = `ls -A ${HOME}/releases; ls -A /tmp`;
    const before = await sh(listing);
    const result = await run({ ...step, stdin: pinned });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `has sha256 ${sha256Hex(fs.readFileSync(path.join(work, `besu-${UNPACKED}.tar.gz`)))}, but Besu ${UNPACKED} must have ${published}: not unpacked, nothing changed`,
    );
    expect(await sh(listing)).toBe(before);
  });

  it('refuses a release download redirected to plain http', async () => {
    const redirecting = await startReleaseServer(host, work, {
      [`/besu-${UNPACKED}.tar.gz`]: `http://${host.gateway}:9/besu-${UNPACKED}.tar.gz`,
    });
    try {
      const stackVia = sshWriterStack(host, {
        version: UNPACKED,
        releaseBaseUrl: redirecting.url,
        releaseDir: work,
        nodeName: 'e2e-writer',
        dnsName: 'writer.e2e.test',
      });
      const step = commands(await declareProgram(recorded, 'testnet', stackVia, {})).find(
        (s) => s.name === `${NODE}-release`,
      )!;
      const result = await run(step);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`cannot download Besu ${UNPACKED} from ${redirecting.url}`);
      expect(result.stderr).toContain('(https only, redirects too)');
      expect(redirecting.requests()).toEqual([`/besu-${UNPACKED}.tar.gz`]);
      expect(await sh(`test -e ${HOME}/releases/besu-${UNPACKED} && echo there || echo absent`)).toBe('absent');
    } finally {
      await redirecting.close();
    }
  });

  it('runs nothing of a step whose input is cut off mid-way', async () => {
    const step = commands(await current()).find((s) => s.name === `${NODE}-node-files`)!;
    // The node's config.toml, which the step writes again when it is missing.
    const config = `${HOME}/config.toml`;
    const written = await sh(`sha256sum <${config}`);
    await sh(`rm -f ${config}`);
    const cut = await run({ ...step, stdin: step.stdin.slice(0, Math.floor(step.stdin.length * 0.9)) });
    expect(cut.code).not.toBe(0);
    expect(cut.stdout).toBe('');
    expect(await sh(`test -e ${config} && echo there || echo absent`)).toBe('absent');
    const whole = await run(step);
    expect(whole.code).toBe(0);
    expect(await sh(`sha256sum <${config}`)).toBe(written);
  });

  it('never lets a symlink the service user planted make root change anything outside the node', async () => {
    const canaries = ['/etc/lacchain-canary', '/root/lacchain-canary', '/usr/local/lacchain-canary'];
    const state = `stat -c '%n %U:%G %a %s' ${canaries.join(' ')}; sha256sum ${canaries.join(' ')}`;
    await sh(canaries.map((c) => `printf 'canary\\n' > ${c} && chmod 0600 ${c}`).join(' && '));
    const before = await sh(state);
    try {
      // An older version of the program gave the home to the service user: the next run takes it back.
      await sh(`chown besu ${HOME}`);
      const asBesu = (command: string) => sh(`runuser -u besu -- sh -c '${command}'`);
      await asBesu(`ln -sfn ${canaries[0]} ${HOME}/data/nodeAddress`);
      await asBesu(`ln -sfn ${canaries[1]} ${HOME}/data/genesis.json`);
      await asBesu(`ln -sfn ${canaries[2]} ${HOME}/data/enode`);
      await asBesu(`ln -sfn ${canaries[0]} ${HOME}/logs/besu_info.log`);
      await asBesu(`mv ${HOME}/config.toml ${HOME}/config.toml.real && ln -s ${canaries[1]} ${HOME}/config.toml`);

      const steps = commands(await current()).filter((s) => /-(release|node-files|node-key|proxy)$/.test(s.name));
      for (const step of steps) {
        const result = await run(step);
        const failed = result.code === 0 ? {} : { stderr: result.stderr };
        expect({ step: step.name, code: result.code, ...failed }).toEqual({ step: step.name, code: 0 });
      }
      expect(await sh(state)).toBe(before);
      expect(await sh(`stat -c '%U:%G %a' ${HOME}`)).toBe('root:besu 750');
      const plainFileOf = (file: string) =>
        sh(`test -f ${file} && ! test -L ${file} && stat -c '%U' ${file} || echo 'not a plain file'`);
      for (const file of ['data/nodeAddress', 'data/genesis.json', 'data/enode', 'logs/besu_info.log']) {
        expect([file, await plainFileOf(`${HOME}/${file}`)]).toEqual([file, 'besu']);
      }
      expect(await plainFileOf(`${HOME}/config.toml`)).toBe('root');
      expect(await sh(`cat ${HOME}/data/nodeAddress`)).toBe(address);
      // With the home root's again, the service user can plant nothing there any more.
      expect(await asBesu(`ln -s /etc ${HOME}/again 2>/dev/null && echo planted || echo refused`)).toBe('refused');

      // A key file replaced by a symlink is refused, not followed.
      await sh(`mv ${HOME}/data/key /root/key.saved`);
      await asBesu(`ln -s ${canaries[0]} ${HOME}/data/key`);
      const keyStep = commands(await current()).find((s) => s.name === `${NODE}-node-key`)!;
      const refused = await run(keyStep);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/data\/key is not a plain file \(a symlink or a folder\)/);
      expect(await sh(state)).toBe(before);
    } finally {
      // Whatever happened, the node gets its key back and starts on the files the steps wrote.
      await sh(`test -e /root/key.saved && rm -f ${HOME}/data/key && mv /root/key.saved ${HOME}/data/key || true`);
      await sh(`rm -f ${HOME}/config.toml.real ${canaries.join(' ')} && systemctl restart besu`);
    }
    expect(await answersWithEnode()).toBe(enode);
  });

  it("prints the certificate's fingerprint and public key pin, which the TLS served on 443 matches", async () => {
    const step = commands(await current()).find((s) => s.name === `${NODE}-proxy`)!;
    const result = await run(step);
    expect(outcome(result)).toBe('exit 0');
    const identity = tlsIdentityOf(result.stdout);
    // What a client sees on 443, from outside the machine.
    const served = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      const socket = tls.connect({ host: host.ip, port: PORTS.reverseProxyHttps, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate());
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(identity.certificateSha256).toBe(served.fingerprint256);
    const spki = new X509Certificate(served.raw).publicKey.export({ type: 'spki', format: 'der' });
    expect(identity.publicKeyPin).toBe(`sha256//${createHash('sha256').update(spki).digest('base64')}`);
  });

  it('puts the previous proxy site back when nginx refuses a new one, and keeps serving', async () => {
    const step = commands(await current()).find((s) => s.name === `${NODE}-proxy`)!;
    const site = '/etc/nginx/conf.d/lacchain-besu.conf';
    const before = await sh(`sha256sum ${site}`);
    const broken = step.stdin.replace("export PROXY_SITE='", "export PROXY_SITE='not an nginx directive;\n");
    expect(broken).not.toBe(step.stdin);
    const result = await run({ ...step, stdin: broken });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/nginx refuses the new configuration: the previous .*lacchain-besu\.conf is back/);
    expect(await sh(`sha256sum ${site}`)).toBe(before);
    expect(await sh('ls -A /etc/nginx | grep -c lacchain-site || true')).toBe('0');
    expect(await sh('nginx -t 2>&1 | tail -n 1')).toMatch(/test is successful/);
    const liveness = `curl -sk -o /dev/null -w '%{http_code}' -H 'Host: localhost' https://${host.ip}/liveness`;
    expect(await sh(liveness)).toBe('200');
  });

  describe("the node's metrics: Besu serves them on the loopback, the relay pushes them to the network's gateway", () => {
    const job = `/metrics/job/e2e-writer`;
    const posts = () => gateway.pushes.filter((p) => p.method === 'POST' && p.path === job);
    /** The relay's unit on the machine (the node's service is `besu`). */
    const RELAY_UNIT = `besu-${METRICS.relayName}`;
    /** How long the fixed-rate test's gateway holds one push's answer: most of an interval. */
    const HELD_ANSWER_MS = 3000;
    /** How early a Node timer may fire, as Date.now measures it. */
    const TIMER_SLACK_MS = 5;

    /**
     * The relay's pushes since one interval after its last start (the deployment and the tests before restarted Besu,
     * and the relay with it; Besu itself starts in that first interval), once there are `count` of them: the pushes
     * made meanwhile count, so a test waits only for the ones still missing.
     */
    const steadyPushes = async (count: number) => {
      const started = await sh(
        `date -d "$(systemctl show --timestamp=us -p ActiveEnterTimestamp --value ${RELAY_UNIT})" +%s%3N`,
      );
      expect(started).toMatch(/^\d+$/);
      const since = Number(started) + METRICS.pushIntervalSeconds * 1000;
      const steady = () => posts().filter((push) => push.at >= since);
      for (let i = 0; i < 60 && steady().length < count; i++) await new Promise((resolve) => setTimeout(resolve, 1000));
      return steady();
    };
    /** Besu's series on the loopback, and each push's: the same series, in Prometheus' text format. */
    const expectPushedAsServed = async (pushes: Array<{ contentType?: string; body: string }>) => {
      const served = await sh(`curl -sf -H 'Host: localhost' http://127.0.0.1:${METRICS.besuPort}/metrics`);
      expect(served).toMatch(/^ethereum_blockchain_height \d+$/m);
      for (const push of pushes) {
        expect(push.contentType).toBe('text/plain; version=0.0.4');
        expect(seriesNames(push.body)).toEqual(seriesNames(served));
      }
    };

    it('pushes what Besu serves, as Besu would: POST, job = the node name, text format', async () => {
      const pushes = await steadyPushes(1);
      expect(pushes.length).toBeGreaterThanOrEqual(1);
      await expectPushedAsServed(pushes.slice(-3));
      // Never from outside: Besu's metrics listen on the loopback.
      expect(await probeTcp(host.ip, METRICS.besuPort)).toBe('refused');
    });

    it("writes the machine's series beside them: the data's filesystem and each service's state", async () => {
      const machine = await sh(`cat /run/besu-metrics/machine.prom`);
      expect(machine).toMatch(/^node_filesystem_avail_bytes\{mountpoint="[^"]+"\} \d+$/m);
      expect(machine).toMatch(/^node_filesystem_size_bytes\{mountpoint="[^"]+"\} \d+$/m);
      expect(machine).toContain('node_systemd_unit_state{name="besu.service",state="active"} 1');
      expect(machine).toContain('node_systemd_unit_state{name="besu-relay-signer.service",state="active"} 1');
      // The relay's own series: when the gateway last took a push, one it answered.
      const lastPush = Number(machine.match(new RegExp(`^${METRICS.lastPushSeries} (\\d+)$`, 'm'))?.[1]);
      expect(answeredPushAt(gateway, lastPush, METRICS.pushIntervalSeconds)).toBe(true);
    });

    it('serves them over TLS on 9443 to the bearer token only', async () => {
      const get = (path: string, token?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const request = https.get(
            {
              host: host.ip,
              port: METRICS.endpointPort,
              path,
              rejectUnauthorized: false,
              headers: token ? { authorization: `Bearer ${token}` } : {},
            },
            (response) => {
              let body = '';
              response.on('data', (chunk) => (body += chunk));
              response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
            },
          );
          request.on('error', reject);
        });
      expect((await get(METRICS.besuPath)).status).toBe(401);
      expect((await get(METRICS.besuPath, 'not-the-token')).status).toBe(401);
      expect((await get(METRICS.machinePath)).status).toBe(401);
      const besu = await get(METRICS.besuPath, METRICS_TOKEN);
      expect(besu.status).toBe(200);
      expect(besu.body).toMatch(/^ethereum_peer_count \d+$/m);
      const machine = await get(METRICS.machinePath, METRICS_TOKEN);
      expect(machine.body).toMatch(/^node_filesystem_avail_bytes\{mountpoint="[^"]+"\} \d+$/m);
      expect((await get('/', METRICS_TOKEN)).status).toBe(404);
    });

    describe("a real Prometheus (Debian's) scraping it the way the docs say, with monitoring/alerts.yml", () => {
      let prometheus: TestPrometheus | undefined;
      /** How long BesuNoPeers holds before it fires, here. */
      const HOLD_SECONDS = 5;
      const alerts = () => prometheus!.alerts();
      const until = async (what: () => Promise<boolean>, seconds: number) => {
        for (let i = 0; i < seconds && !(await what()); i++) await new Promise((resolve) => setTimeout(resolve, 1000));
        return what();
      };

      beforeAll(async () => {
        const certificate = await sh(`cat ${HOME}/tls/besu.crt`);
        // As the docs say, scraping and evaluating every second so the test does not wait; BesuNoPeers' hold cut to
        // HOLD_SECONDS (the real hold is promtool's to judge, in simulated time: tests/tools/alerts.test.ts).
        prometheus = await startPrometheus('prometheus', (dir) => {
          const alertsFile = path.join(PROJECT_DIR, MONITORING_DIR, 'alerts.yml');
          const rules = rulesHeldFor(alertsFile, dir, ['BesuNoPeers'], HOLD_SECONDS);
          fs.writeFileSync(path.join(dir, 'node.crt'), certificate);
          fs.writeFileSync(path.join(dir, 'token.txt'), METRICS_TOKEN);
          const target = {
            target: `${host.ip}:${METRICS.endpointPort}`,
            tokenFile: path.join(dir, 'token.txt'),
            caFile: path.join(dir, 'node.crt'),
            stack: 'testnet',
            node: NODE,
          };
          return prometheusConfig([target], rules, 1);
        });
        const targets = await prometheus.targets(
          60,
          (found) => found.length === 2 && found.every((t) => t.health === 'up'),
        );
        expect(targets.length === 2 && targets.every((t) => t.health === 'up')).toBe(true);
      });

      afterAll(() => {
        prometheus?.stop();
      });

      it(`BesuNoPeers fires when the node loses its peers (held ${NO_PEERS_FOR_MINUTES} min, here ${HOLD_SECONDS} s), and clears when they are back`, async () => {
        expect((await alerts()).filter((a) => a.state === 'firing').map((a) => a.labels.alertname)).toEqual([]);
        // Its one real peer (the host's network peer) taken out of the contract: the node drops it at its next block.
        await register(permissioned(enode, 'open-protestnet', NODE));
        const firing = await until(
          async () => (await alerts()).some((a) => a.labels.alertname === 'BesuNoPeers' && a.state === 'firing'),
          HOLD_SECONDS + 60,
        );
        // Registered again: the node dials it again (within about 35 s, go-ethereum's dial history) and keeps it.
        await permission();
        expect(firing).toBe(true);
        expect(await hasPeer()).toBe(1);
        const cleared = await until(
          async () => !(await alerts()).some((a) => a.labels.alertname === 'BesuNoPeers'),
          30,
        );
        expect(cleared).toBe(true);
        expect((await alerts()).filter((a) => a.state === 'firing').map((a) => a.labels.alertname)).toEqual([]);
      });
    });

    // After the tests above, which do not restart Besu: the relay has pushed meanwhile.
    it(`pushes every ${METRICS.pushIntervalSeconds} s at a fixed rate, as Besu does: a push answered late is followed by an early one`, async () => {
      const pushes = await steadyPushes(5);
      expect(pushes.length).toBeGreaterThanOrEqual(5);
      await expectPushedAsServed(pushes.slice(-3));
      // None missed: no gap of two intervals.
      const gaps = pushes.slice(1).map((push, i) => (push.at - pushes[i].at) / 1000);
      for (const gap of gaps) expect(gap).toBeLessThan(2 * METRICS.pushIntervalSeconds);
      // One answer held most of an interval: the next push is due one interval after the held one was, not after its
      // answer (as a fixed delay would be).
      const before = posts().length;
      gateway.holdNextAnswer(HELD_ANSWER_MS);
      for (let i = 0; i < 60 && posts().length < before + 2; i++) await new Promise((r) => setTimeout(r, 500));
      const [held, next] = posts().slice(before, before + 2);
      // (Node's timers may fire a millisecond before the time they were set for, as measured by Date.now.)
      expect(held?.answeredAt).toBeGreaterThanOrEqual(held.at + HELD_ANSWER_MS - TIMER_SLACK_MS);
      expect(next.at - held.answeredAt!).toBeLessThan(METRICS.pushIntervalSeconds * 1000);
    });

    it('closes 9443 and removes the token check when lacchain:metricsToken is unset, and opens it again', async () => {
      const tokenFile = `/etc/nginx/lacchain-besu-metrics-token.conf`;
      const withoutToken = stack(NEXT);
      delete withoutToken['lacchain:metricsToken'];
      const stepsOf = async (declared: Declared) =>
        commands(declared).filter((s) => [`${NODE}-proxy`, `${NODE}-firewall`].includes(s.name));
      await runAll(await stepsOf(await declareProgram(recorded, 'testnet', withoutToken, {})));
      expect(await sh(`test -e ${tokenFile} && echo present || echo gone`)).toBe('gone');
      expect(await probeTcp(host.ip, METRICS.endpointPort)).not.toBe('open');
      // Back as it was: the node-key step writes the check again, the proxy serves it, the firewall opens 9443.
      const again = commands(await current()).filter((s) =>
        [`${NODE}-node-key`, `${NODE}-proxy`, `${NODE}-firewall`].includes(s.name),
      );
      await runAll(again);
      expect(await sh(`test -e ${tokenFile} && echo present || echo gone`)).toBe('present');
      expect(await probeTcp(host.ip, METRICS.endpointPort)).toBe('open');
      // The node and its relay went on meanwhile: the gateway still receives the node's pushes.
      const since = Date.now();
      for (let i = 0; i < 15 && !posts().some((p) => p.at >= since); i++) await new Promise((r) => setTimeout(r, 1000));
      progress(await sh(`systemctl is-active besu ${RELAY_UNIT} || true`));
      expect(posts().some((p) => p.at >= since)).toBe(true);
    });

    it('stops with Besu, and takes the job off the gateway as Besu does', async () => {
      const before = gateway.pushes.length;
      const deleted = () => gateway.pushes.slice(before).some((p) => p.method === 'DELETE' && p.path === job);
      try {
        await sh('systemctl stop besu');
        expect(await sh(`systemctl is-active ${RELAY_UNIT} || true`)).toBe('inactive');
        // The DELETE may reach this process's gateway a moment after the unit is reported stopped.
        for (let i = 0; i < 10 && !deleted(); i++) await new Promise((r) => setTimeout(r, 500));
        expect(deleted()).toBe(true);
      } finally {
        // Whatever was found, the node runs again for the tests after this one.
        await sh('systemctl start besu');
      }
      expect(await answersWithEnode()).toBe(enode);
      expect(await sh(`systemctl is-active ${RELAY_UNIT}`)).toBe('active');
    });
  });

  describe("the writer's relay signer (a stand-in started as the real one is)", () => {
    const unit = `besu-${RELAY_SIGNER.name}`;
    const dir = `${HOME}/companions/${RELAY_SIGNER.name}`;
    const mainPid = () => sh(`systemctl show -p MainPID --value ${unit}`);
    /** Waits (15 s at most) until the relay signer answers on its port on the machine. */
    const answering = () =>
      sh(
        `for i in $(seq 75); do curl -s -o /dev/null -X POST -d '{}' http://127.0.0.1:${RELAY_SIGNER.port}/ && echo up && exit; sleep 0.2; done; echo down`,
      );

    it("is installed by version with its pinned digest, configured for the network, runs as the service user and signs as the node's address", async () => {
      expect(await settledState(unit)).toBe('active\nenabled');
      expect(await sh(`readlink ${dir}/releases/current`)).toBe(`${dir}/releases/${RELAY_SIGNER.defaultVersion}`);
      expect(
        await sh(`stat -c '%U:%G %a' ${dir}/releases/current/${RELAY_SIGNER.executable} ${dir}/config.toml ${dir}/log`),
      ).toBe('root:root 755\nroot:besu 640\nbesu:besu 750');
      const config = await sh(`cat ${dir}/config.toml`);
      expect(config).toContain(`contractAddress = "${NETWORKS['open-protestnet'].relayHubContract}"`);
      expect(config).toContain(`port = ${RELAY_SIGNER.port}`);
      expect(await sh(`ps -o user= -p $(systemctl show -p MainPID --value ${unit})`)).toBe('besu');
      // The key reaches it in its environment only: not on its command line, not in its log.
      const key = await sh(`cat ${HOME}/data/key`);
      expect(await sh(`cat /proc/$(systemctl show -p MainPID --value ${unit})/cmdline | tr '\\0' ' '`)).not.toContain(
        key.slice(2),
      );
      expect(await sh(`cat ${dir}/log/* || true`)).not.toContain(key.slice(2));
      // The key it was given is the node's: the address it derives (its own secp256k1 and Keccak) is the one Besu
      // answers with.
      const signer = /signing as (0x[0-9a-f]{40})$/m.exec(await sh(`cat ${dir}/log/idbServiceLog.log`))?.[1];
      expect(signer).toBe(((await rpc('eth_coinbase')).result as string).toLowerCase());
      // Read-only to it: the whole file system but its own log folder.
      expect(await sh(`systemctl show -p ProtectSystem,ReadWritePaths,User,IPAddressDeny ${unit}`)).toContain(
        'ProtectSystem=strict',
      );
    });

    it("receives the gas model's transactions from port 80, and Besu everything else", async () => {
      expect(await answering()).toBe('up');
      await sh(`rm -f ${dir}/log/requests.log`);
      const post = (body: string) => request(80, body, { address: host.ip });
      const transactions = GAS_MODEL_METHODS.map((method, id) =>
        JSON.stringify({ jsonrpc: '2.0', method, params: ['0xf86b80'], id }),
      );
      for (const transaction of transactions) {
        const relayed = await post(transaction);
        expect([relayed.status, JSON.parse(relayed.body).result]).toEqual([200, 'relay-signer-stand-in']);
      }
      const answered = await post('{"jsonrpc":"2.0","method":"eth_chainId","params":[],"id":8}');
      expect(answered.status).toBe(200);
      expect(JSON.parse(answered.body).result).toBe((await rpc('eth_chainId')).result);
      // The relay signer received the four transactions and nothing else.
      expect(await sh(`cat ${dir}/log/requests.log`)).toBe(transactions.join('\n'));
    });

    it('is not reachable from outside the machine: nftables fences its port to the loopback', async () => {
      // systemd's own fence (IPAddressDeny) needs cgroup v2, which the test host's systemd does not run on: the
      // nftables rules the service loads before it starts are what refuses the outside here.
      const step = commands(await current()).find((s) => s.name === `${NODE}-companions`)!;
      const said = await run(step);
      expect(said.code).toBe(0);
      const outside = await new Promise<string>((resolve) => {
        const request = http.request({ host: host.ip, port: RELAY_SIGNER.port, method: 'POST', path: '/' }, () =>
          resolve('answered'),
        );
        request.setTimeout(3_000, () => request.destroy(new Error('no answer within 3 s')));
        request.on('error', (error) => resolve(`refused: ${error.message}`));
        request.end('{}');
      });
      expect(outside).toMatch(/^refused/);
      expect(said.stdout).toContain(`${unit} answers on the loopback only`);
      expect(await sh('nft list tables')).toContain('table inet lacchain_besu_relay_signer');
      // The proxy on the machine still reaches it (the routing test above), and so does the loopback.
      expect(await answering()).toBe('up');
    });

    it("is reached on the loopback by root and the proxy's user only: not by Besu's, not by the monitoring client's", async () => {
      expect(await answering()).toBe('up');
      const connects = (user: string, port: number) => connectsAs(sh, user, port);
      expect(await connects(ETHSTATS.systemUser, RELAY_SIGNER.port)).toBe('refused');
      expect(await connects('besu', RELAY_SIGNER.port)).toBe('refused');
      expect(await connects('nobody', RELAY_SIGNER.port)).toBe('refused');
      expect(await connects('www-data', RELAY_SIGNER.port)).toBe('reaches');
      // Besu's WebSocket (no authentication): the companions' users reach it, no other user does.
      await withLoopbackListener(sh, PORTS.rpcWs, async () => {
        expect(await connects(ETHSTATS.systemUser, PORTS.rpcWs)).toBe('reaches');
        expect(await connects('besu', PORTS.rpcWs)).toBe('reaches');
        expect(await connects('nobody', PORTS.rpcWs)).toBe('refused');
      });
      expect(await sh('nft list tables')).toContain('table inet lacchain_besu_websocket');
    });

    it('is started again by systemd when killed, and stopped and started with Besu', async () => {
      const pid = await mainPid();
      await sh(`kill -9 ${pid}`);
      let now = pid;
      for (let i = 0; i < 60 && (now === pid || now === '0'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        now = await mainPid();
      }
      expect(now).not.toBe(pid);
      expect(now).not.toBe('0');
      await sh('systemctl stop besu');
      expect(await unitState(unit)).toBe('inactive');
      await sh('systemctl start besu');
      expect(await unitState(unit)).toBe('active');
      expect(await answersWithEnode()).toBe(enode);
      expect(await answering()).toBe('up');
    });

    it('is stopped and its service removed when turned off, its files kept', async () => {
      const off = await withCompanion('relaySigner', { enabled: false });
      const step = commands(off).find((s) => s.name === `${NODE}-companions`)!;
      const result = await run(step);
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toContain(`stopped and removed ${unit}`);
      expect(await sh(`systemctl is-active ${unit} || true`)).not.toBe('active');
      expect(await sh(`test -f ${dir}/config.toml && echo kept`)).toBe('kept');
      // And back on: installed again from the release already there.
      const again = await run(commands(await current()).find((s) => s.name === `${NODE}-companions`)!);
      expect(again.code).toBe(0);
      expect(await answering()).toBe('up');
    });
  });
  describe("the network's monitoring client (a stand-in image run as the real one is)", () => {
    const unit = `besu-${ETHSTATS.name}`;
    const state = `${HOME}/companions/${ETHSTATS.name}/state`;
    const registration = `${state}/configstore/ethstats-cli.json`;
    const logins = () => monitor.messages.filter((m) => m.topic === 'login');
    const registrations = () => monitor.messages.filter((m) => m.topic === 'registerNode');
    /** Waits (30 s at most) until the server has seen more than `count` logins. */
    async function loginsAfter(count: number): Promise<number> {
      for (let i = 0; i < 60 && logins().length <= count; i++) await new Promise((r) => setTimeout(r, 500));
      return logins().length;
    }

    it("is pulled by its digest, runs as the service user and registers the node's name and e-mail", async () => {
      expect(await settledState(unit)).toBe('active\nenabled');
      expect(registry.requests()).toContain(`/v2/lacchain/ethstats-cli-standin/manifests/${registry.digest}`);
      await loginsAfter(0);
      expect(registrations().map((m) => m.payload)).toEqual([
        { accountEmail: 'ops@example.org', nodeName: 'e2e-writer' },
      ]);
      expect(logins().at(-1)?.payload).toMatchObject({ nodeName: 'e2e-writer', client: 'ws://127.0.0.1:4546' });
      // Its registration is its own user's alone, in the folder that outlives the container.
      const own = `${ETHSTATS.systemUser}:${ETHSTATS.systemUser}`;
      expect(await sh(`stat -c '%U:%G %a' ${state} ${registration}`)).toBe(`${own} 700\n${own} 600`);
      const secret = JSON.parse(await sh(`cat ${registration}`)).secretKey;
      expect(monitor.registered().get('e2e-writer')).toBe(secret);
      // The client's own process (not podman's, whose command line names it too).
      expect(await sh('ps -o user= -C ethstats-cli.js')).toBe(ETHSTATS.systemUser);
      // A system user of its own: no login shell, no home.
      expect(await sh(`getent passwd ${ETHSTATS.systemUser} | cut -d: -f6,7`)).toBe('/nonexistent:/usr/sbin/nologin');
      // Nothing of the node's identity reaches it, and its secret is not in the journal.
      expect(await sh(`journalctl -u ${unit} --no-pager`)).not.toContain(secret);
      expect(await sh(`journalctl -u ${unit} --no-pager | grep -c 'logged in as e2e-writer' || true`)).not.toBe('0');
    });

    it('is started again by systemd when killed, and logs in with the registration it kept', async () => {
      const before = logins().length;
      await sh('pkill -KILL -x ethstats-cli.js');
      expect(await loginsAfter(before)).toBeGreaterThan(before);
      expect(await unitState(unit)).toBe('active');
      expect(registrations()).toHaveLength(1);
      expect(logins().at(-1)?.payload.secretKey).toBe(monitor.registered().get('e2e-writer'));
    });

    it('is stopped and started with Besu', async () => {
      await sh('systemctl stop besu');
      expect(await unitState(unit)).toBe('inactive');
      expect(await sh('podman ps --format {{.Names}}')).toBe('');
      const before = logins().length;
      await sh('systemctl start besu');
      expect(await unitState(unit)).toBe('active');
      expect(await answersWithEnode()).toBe(enode);
      expect(await loginsAfter(before)).toBeGreaterThan(before);
    });

    it('keeps its registration when turned off and on again: it never registers twice', async () => {
      const off = await withCompanion('ethstats', { enabled: false });
      const result = await run(commands(off).find((s) => s.name === `${NODE}-companions`)!);
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toContain(`stopped and removed ${unit}`);
      expect(await sh(`test -f ${registration} && echo kept`)).toBe('kept');
      const before = logins().length;
      const again = await run(commands(await current()).find((s) => s.name === `${NODE}-companions`)!);
      expect(again.code).toBe(0);
      expect(await loginsAfter(before)).toBeGreaterThan(before);
      expect(registrations()).toHaveLength(1);
    });

    it('refuses an image that is not the pinned one, and changes nothing', async () => {
      const wrong = `sha256:${'0'.repeat(64)}`;
      const changed = await withCompanion('ethstats', {
        image: registry.image,
        imageDigest: wrong,
        serverUrl: monitor.url,
      });
      const result = await run(commands(changed).find((s) => s.name === `${NODE}-companions`)!);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`cannot pull ${registry.image}@${wrong}`);
      expect(await unitState(unit)).toBe('active');
      expect(await sh(`grep -c ${registry.digest} /etc/systemd/system/${unit}.service`)).toBe('1');
    });
  });

  describe('a release whose Java the system lacks: Besu 25.5.0 on Debian 12, which has no Java 21', () => {
    let latest: Declared;

    beforeAll(async () => {
      await packStandinReleases([LATEST], work);
      const sha256 = packJavaStandin(work);
      latest = await declareProgram(recorded, 'testnet', latestStack(sha256), {});
    });

    it('installs the pinned runtime for the launcher only, and the node runs the release on it', async () => {
      // Debian 12's sources know openjdk-21-jre-headless only by reference: no candidate to install.
      expect(await sh("apt-cache policy openjdk-21-jre-headless | awk '/Candidate:/ { print $2 }'")).toMatch(
        /^(\(none\))?$/,
      );
      const steps = commands(latest);
      const preflight = await run(steps.find((s) => s.name === `${NODE}-preflight`)!);
      expect(preflight.stdout).toContain(`preflight: Besu ${LATEST} runs on Java 21: the pinned runtime for x86_64`);
      await runAll(steps);
      expect((await rpc('web3_clientVersion')).result).toMatch(new RegExp(`^besu/v${LATEST}/`));
      expect((await rpc('net_enode')).result).toBe(enode);
      // The runtime is unpacked once, by its digest, and used by the node's launcher only.
      expect(await sh('readlink /opt/lacchain-java/java-21')).toMatch(/^\/opt\/lacchain-java\/runtime-[0-9a-f]{64}$/);
      expect(await sh('/opt/lacchain-java/java-21/bin/java -version 2>&1 | head -1')).toContain('"21.0.11"');
      const pid = await sh('systemctl show -p MainPID --value besu');
      expect(await sh(`tr '\\0' '\\n' < /proc/${pid}/environ | grep '^JAVA_HOME='`)).toBe(
        'JAVA_HOME=/opt/lacchain-java/java-21',
      );
      expect(await sh("java -version 2>&1 | awk -F'\"' '/version/ { print $2 }' | cut -d. -f1")).toBe('17');
    });

    it('refuses, in the preflight and before any change, a Java 21 release without a runtime for this machine', async () => {
      const steps = commands(latest);
      const preflight = steps.find((s) => s.name === `${NODE}-preflight`)!;
      const without = {
        ...preflight,
        stdin: preflight.stdin.replace(/export JAVA_RUNTIME_ARCHIVES='[^']*'/, "export JAVA_RUNTIME_ARCHIVES=''"),
      };
      await sh('mv /opt/lacchain-java /opt/lacchain-java.kept');
      const result = await run(without);
      await sh('mv /opt/lacchain-java.kept /opt/lacchain-java');
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(
        /Besu 25\.5\.0 needs Java 21: this machine has Java 17, its package sources offer none and no pinned runtime exists for x86_64; give the inventory's java_runtime_url and java_runtime_sha256/,
      );
    });
  });
  describe('backups, restore and rollback with npm run node (restic from Debian 12)', () => {
    let keyFile: string;
    let javaSha256: string;
    let node: ReturnType<typeof nodeTool>;
    const head = async () => parseInt((await rpc('eth_blockNumber')).result, 16);
    const releaseInUse = () => sh(`readlink ${HOME}/releases/current`);
    /** The stack as the node runs now (25.5.0, its Java from the test's server), with `backups` set. */
    const stackWith = (backups?: object) => {
      const config = latestStack(javaSha256);
      if (backups) config['lacchain:backups'] = backups;
      return config;
    };

    beforeAll(() => {
      javaSha256 = createHash('sha256')
        .update(fs.readFileSync(path.join(work, JAVA_STANDIN_ARCHIVE)))
        .digest('hex');
      node = nodeTool(operatorStackFile(work, stackWith()), host.privateKeyFile);
      // The operator's own copy of the node key, as npm run keygen or init writes it.
      keyFile = path.join(work, 'writer.key');
      fs.writeFileSync(keyFile, nodeKeyOf(commands(first)), { mode: 0o600 });
    });

    it('took a backup before each release change, on the release that ran the data', async () => {
      const result = await node('backups');
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toMatch(/^node writer: 2 backup\(s\) in \/var\/backups\/lacchain\/besu \(restic, on /m);
      expect(result.stdout).toMatch(
        new RegExp(`^ {2}[0-9a-f]{8} .* writer {2}${NEXT.replace(/\./g, '\\.')} +\\d+ +before-release-change$`, 'm'),
      );
      expect(result.stdout).toMatch(
        new RegExp(`^ {2}[0-9a-f]{8} .* writer {2}${FIRST.replace(/\./g, '\\.')} +\\d+ +before-release-change$`, 'm'),
      );
      // The repository is root's alone, and so is its password.
      expect(await sh('stat -c "%U %a" /var/backups/lacchain/besu /etc/lacchain/besu-backup.env')).toBe(
        'root 700\nroot 600',
      );
    });

    it('backs up at head H, node stopped meanwhile and started again, with its progress', async () => {
      const before = await head();
      const result = await node('backup');
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toMatch(
        /^backup: [\d.]+ (B|KiB|MiB) of [\d.]+ (B|KiB|MiB) \(100 %\), [\d.]+ (B|KiB|MiB)\/s, done$/m,
      );
      const taken = /backup ([0-9a-f]{8}) taken in (.*): Besu 25\.5\.0, head (\d+)/.exec(result.stdout);
      expect([taken?.[3] !== undefined && Number(taken[3]) >= before, result.stdout]).toEqual([true, result.stdout]);
      // Running again: on failure, what systemd and the node said, to tell a start that failed from a slow one.
      const state = await sh('systemctl is-active besu || true');
      const said = state === 'active' ? '' : await sh(`journalctl -u besu -n 30 --no-pager; tail -n 30 ${HOME}/logs/*`);
      expect({ state, said }).toEqual({ state: 'active', said: '' });
      expect(await answersWithEnode()).toBe(enode);
      // The key is not in the backup: it lives in the stack's secrets and the operator's copy.
      const listing = await sh(
        `. /etc/lacchain/besu-backup.env && RESTIC_REPOSITORY=$RESTIC_REPOSITORY RESTIC_PASSWORD=$RESTIC_PASSWORD restic ls ${taken![1]}`,
      );
      expect(listing).toContain(`${HOME}/data/standin-chain.json`);
      expect(listing).toContain(`${HOME}/config.toml`);
      expect(listing).not.toContain(`${HOME}/data/key`);
    });

    /** Runs `body` with a drop-in that makes the node's start fail (as root: `+`): `once` the next start only, else every one. */
    const withFailingStart = async (once: boolean, body: () => Promise<void>) => {
      const marker = '/run/besu-failed-once';
      const check = once ? `test -e ${marker} || { touch ${marker}; exit 1; }` : 'exit 1';
      await sh(
        `mkdir -p ${FAILING_START.dir} && printf '[Service]\\nRestart=no\\nExecStartPre=+/bin/sh -c "${check}"\\n' > ${FAILING_START.file} && systemctl daemon-reload`,
      );
      try {
        await body();
      } finally {
        await sh(`rm -f ${FAILING_START.file} ${marker} && systemctl daemon-reload`);
      }
    };

    it('starts the node again when its first start after the copy fails, saying what systemd said', async () => {
      await withFailingStart(true, async () => {
        const result = await node('backup');
        expect(outcome(result)).toBe('exit 0');
        expect(`${result.stdout}${result.stderr}`).toMatch(
          /besu failed to start \(failed, result exit-code\): starting it once more/,
        );
      });
      expect(await sh('systemctl is-active besu')).toBe('active');
      expect(await answersWithEnode()).toBe(enode);
    });

    it('says so, and how to start it, when the node does not start again after the copy', async () => {
      await withFailingStart(false, async () => {
        const result = await node('backup');
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(
          /besu did not answer within \d+ s of being started again after the copy \(the backup was taken\): see the journal above, then start it with npm run node -- start/,
        );
        expect(`${result.stdout}${result.stderr}`).toMatch(
          /node-backup: besu is failed, result exit-code; its journal's last lines:/,
        );
      });
      expect(outcome(await node('start'))).toBe('exit 0');
      expect(await answersWithEnode()).toBe(enode);
    });

    /** A file of the node's data the tests write (as the service user): which data came back tells by it. */
    const marker = `${HOME}/data/restore-marker`;
    const writeMarker = (text: string) => sh(`runuser -u besu -- sh -c 'printf %s ${text} >${marker}'`);

    it("restores after data/ is gone: the backup's own data back (a marker and the chain height changed after it), same enode (the drill)", async () => {
      await writeMarker('before-the-backup');
      const backup = await node('backup');
      expect(outcome(backup)).toBe('exit 0');
      const at = Number(/backup [0-9a-f]{8} taken in .*: Besu [^,]+, head (\d+)/.exec(backup.stdout)?.[1]);
      expect(at).toBeGreaterThan(0);
      // Both changed after the backup (the chain far past its head), then the data folder lost.
      const later = at + 100_000;
      await sh(
        `systemctl stop besu && runuser -u besu -- sh -c 'printf %s after-the-backup >${marker} && printf "{\\"height\\": ${later}}" >${HOME}/data/standin-chain.json'`,
      );
      await sh(`rm -rf ${HOME}/data`);
      const withoutKey = await node('restore');
      expect(withoutKey.code).toBe(1);
      expect(withoutKey.stderr).toMatch(/the node key .*data\/key is gone and is not in any backup: give your copy/);
      const result = await node('restore', '--key-file', keyFile);
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toMatch(/node writer: restored in /);
      expect(await answersWithEnode()).toBe(enode);
      // What came back is the backup's: its marker, and its chain (at its head or just past it, not the later one).
      expect(await sh(`cat ${marker}`)).toBe('before-the-backup');
      const restoredHead = await head();
      expect(restoredHead).toBeGreaterThanOrEqual(at);
      expect(restoredHead).toBeLessThan(later);
      expect(await sh(`stat -c '%U:%G %a' ${HOME}/data ${HOME}/data/key`)).toBe('besu:besu 750\nbesu:besu 600');
    });

    it("refuses a key file that is not the node's, before changing anything", async () => {
      const other = path.join(work, 'other.key');
      fs.writeFileSync(other, `0x${'11'.repeat(32)}`, { mode: 0o600 });
      const result = await node('restore', '--key-file', other);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/the key file is not node writer's/);
      expect(await answersWithEnode()).toBe(enode);
    });

    it('rolls back to the release before the last change with the backup taken before it', async () => {
      expect(await releaseInUse()).toBe(`${HOME}/releases/besu-${LATEST}`);
      // The backup taken before the change to LATEST: the newest of NEXT's before-release-change ones.
      const rows = (await node('backups')).stdout.split('\n').filter((line) => /^ {2}[0-9a-f]{8} /.test(line));
      const before = rows
        .map((line) => line.trim().split(/ +/))
        .find((row) => row[4] === NEXT && row[6] === 'before-release-change');
      expect(before).toBeDefined();
      const result = await node('rollback');
      expect(outcome(result)).toBe('exit 0');
      expect(result.stdout).toContain(`rolling back from Besu ${LATEST} to ${NEXT}`);
      expect(result.stdout).toContain(`set the node's release to ${NEXT}`);
      expect(await releaseInUse()).toBe(`${HOME}/releases/besu-${NEXT}`);
      expect(await answersWithEnode()).toBe(enode);
      expect((await rpc('web3_clientVersion')).result).toMatch(new RegExp(`^besu/v${NEXT}/`));
      // The data is the one 24.1.0 ran: 25.5.0 never opened it.
      expect(await sh(`test -e ${HOME}/data/VERSION_METADATA.json && echo opened || echo clean`)).toBe('clean');
      // And it is that backup's: the marker written since is gone, and every file of the backup is back as it was
      // (but the chain file, which the node rewrites as it imports, and the key, which is never in a backup).
      expect(await sh(`test -e ${marker} && echo kept || echo gone`)).toBe('gone');
      const check = '/root/rollback-check';
      const differences = await sh(
        `rm -rf ${check} && . /etc/lacchain/besu-backup.env && RESTIC_REPOSITORY=$RESTIC_REPOSITORY RESTIC_PASSWORD=$RESTIC_PASSWORD restic restore --quiet ${before![0]} --target ${check} --include ${HOME}/data && ` +
          `diff -r --no-dereference --exclude=standin-chain.json ${check}${HOME}/data ${HOME}/data | grep -v '^Only in ${HOME}/data' || true; rm -rf ${check}`,
      );
      expect(differences).toBe('');
    });

    it('never starts an older Besu on data a newer one opened: the restore refuses it, and so does Besu', async () => {
      const list = (await node('backups')).stdout;
      const newer = new RegExp(`([0-9a-f]{8}) .* ${LATEST.replace(/\./g, '\\.')} +(\\d+) +manual`).exec(list)!;
      const refused = await host.ssh(`${HOME}/bin/node-backup restore ${newer[1]} ${NEXT} ${newer[2]}`, {
        timeoutMs: 60_000,
      });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`backup ${newer[1]} was not taken on Besu ${NEXT}`);
      expect((await rpc('net_enode')).result).toBe(enode);
      // Besu itself (the stand-in as Besu from 24.3.0): the data LATEST opened, put in place by hand with the node's
      // key, and the node started on NEXT, the release it runs now.
      const data = `${HOME}/data`;
      const newerData = `/root/newer-data`;
      const refusal = `Besu version ${NEXT} is lower than version ${LATEST} that last started this database`;
      const infoLog = `${HOME}/logs/besu_info.log`;
      try {
        await sh(
          `systemctl stop besu && mv ${data} ${data}.kept && . /etc/lacchain/besu-backup.env && ` +
            `RESTIC_REPOSITORY=$RESTIC_REPOSITORY RESTIC_PASSWORD=$RESTIC_PASSWORD restic restore --quiet ${newer[1]} --target ${newerData} && ` +
            `mv ${newerData}${data} ${data} && cp -p ${data}.kept/key ${data}/key && systemctl start besu && ` +
            `for i in $(seq 150); do grep -q '${refusal}' ${infoLog} && break; sleep 0.2; done`,
        );
        expect(await sh(`cat ${data}/VERSION_METADATA.json`)).toContain(LATEST);
        // Besu's output goes to its info log (the launcher, scripts/start-node.sh).
        expect(await sh(`grep -c '${refusal}' ${infoLog}`)).not.toBe('0');
        expect(await sh('systemctl is-active besu || true')).not.toBe('active');
        expect(await rpc('net_enode').catch(() => 'no answer')).toBe('no answer');
      } finally {
        // The node back on its own data, whatever was found.
        await sh(
          `systemctl stop besu; test -d ${data}.kept && rm -rf ${data} && mv ${data}.kept ${data}; ` +
            `rm -rf ${newerData}; systemctl reset-failed besu; systemctl start besu`,
        );
      }
      expect(await answersWithEnode()).toBe(enode);
      expect(await sh(`test -e ${data}/VERSION_METADATA.json && echo opened || echo clean`)).toBe('clean');
    });

    it('schedules backups with a systemd timer, and removes it when the schedule is off', async () => {
      const before = commands(await declareProgram(recorded, 'testnet', stackWith(), {}));
      const scheduled = commands(
        await declareProgram(recorded, 'testnet', stackWith({ schedule: 'daily', keep: 3 }), {}),
      );
      const changed = changedCommands(before, scheduled);
      expect(changed.map((s) => s.name)).toEqual([`${NODE}-backups`]);
      await runAll(changed);
      expect(await sh('systemctl is-enabled besu-backup.timer')).toBe('enabled');
      expect(await sh('grep ^OnCalendar= /etc/systemd/system/besu-backup.timer')).toBe('OnCalendar=*-*-* 03:17:00');
      const count = async () => ((await node('backups')).stdout.match(/^ {2}[0-9a-f]{8} /gm) ?? []).length;
      // Three scheduled runs: the newest 3 are kept, and every one taken before a release change; the manual one goes.
      for (let run = 0; run < 3; run++) {
        await sh('systemctl start besu-backup.service');
        expect(await sh('systemctl show -P Result besu-backup.service')).toBe('success');
      }
      const listed = await node('backups');
      expect(outcome(listed)).toBe('exit 0');
      const list = listed.stdout;
      expect(list.match(/ scheduled$/gm)).toHaveLength(3);
      expect(list.match(/ before-release-change$/gm)).toHaveLength(2);
      expect(list).not.toMatch(/ manual$/m);
      expect(await count()).toBe(5);
      expect(await sh('systemctl is-active besu')).toBe('active');
      await runAll(changedCommands(scheduled, before));
      expect(await sh('test -e /etc/systemd/system/besu-backup.timer && echo kept || echo removed')).toBe('removed');
    });
  });
});
