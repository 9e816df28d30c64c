/**
 * Part "ssh": what a deploy costs on the real SSH test host (testing/host: Debian 12, systemd, sshd, apt through
 * the gateway), replaying the program's remote commands over real SSH as tests/e2e/sshNode.test.ts does:
 *   - a first provisioning, step by step;
 *   - a re-run with no change: how many commands the program would run (target 0), and what it costs;
 *   - a release update (23.4.1 -> 24.1.0), step by step, with the RPC downtime seen from outside (a poll of
 *     net_enode on HOST:4545 every 100 ms), against the node's own restart measured the same way.
 * The release archives hold the Besu stand-in (tests/fixtures/besu-standin, a test fixture, not Besu).
 *
 * The test host's apt proxy and the file server live in this process: everything here is async.
 */
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { REMOTE_STEP_NAMES, type RemoteStepName } from '../core/remote/steps';
import { RecordedResource, settle } from '../tools/recording/engine';
import { recordProgram } from '../testing/pulumi';
import { declareProgram } from '../testing/program';
import { startTestHost, TestHost } from '../testing/host/testHost';
import type { FileServer } from '../testing/host/fileServer';
import {
  changedCommands as changed,
  remoteCommands as commands,
  RemoteStep as Step,
  runRemoteSteps,
} from '../testing/replay';
import { packStandinReleases, startReleaseServer } from '../testing/standinReleases';
import { sshWriterStack } from '../testing/sshStacks';
import { fixed, machine, median, now, PartResult, progress, since, table, verdict, withoutTestHosts } from './common';

const HOST_NAME = 'bench';
const HOST_INDEX = 42;
const FIRST = '23.4.1';
const NEXT = '24.1.0';
const NODE = 'writer';
const RPC_PORT = 4545;
/** Poll period and per-request limit of the outside RPC probe. */
const POLL_MS = 100;
const POLL_TIMEOUT_MS = 1000;
/** The probe never runs longer than this (bounded loop). */
const POLL_MAX_MS = 10 * 60_000;
const DOWNTIME_TARGET_SECONDS = 5;

/** One answer (or not) of the outside probe. */
interface Poll {
  /** Seconds since the probe started, when the request was sent. */
  at: number;
  ok: boolean;
}

/** Outside RPC probe: POST net_enode to http://HOST:4545/ every 100 ms, each with a 1 s limit, until stopped. */
class RpcProbe {
  private readonly polls: Poll[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private readonly start = process.hrtime.bigint();

  constructor(
    private readonly host: string,
    private readonly enode: string,
  ) {
    this.tick(0);
  }

  /** Seconds since the probe started. */
  now(): number {
    return since(this.start);
  }

  private tick(count: number): void {
    if (this.stopped || count * POLL_MS > POLL_MAX_MS) return;
    const request = this.once();
    this.inFlight.add(request);
    void request.finally(() => this.inFlight.delete(request));
    // Scheduled on the absolute grid, so a slow answer does not stretch the period.
    const next = (count + 1) * POLL_MS - this.now() * 1000;
    this.timer = setTimeout(() => this.tick(count + 1), Math.max(0, next));
  }

  private once(): Promise<void> {
    const at = this.now();
    return new Promise((resolve) => {
      let settled = false;
      const done = (ok: boolean) => {
        if (settled) return;
        settled = true;
        this.polls.push({ at, ok });
        resolve();
      };
      const request = http.request(
        {
          host: this.host,
          port: RPC_PORT,
          method: 'POST',
          path: '/',
          agent: false,
          headers: { 'content-type': 'application/json', host: 'localhost' },
        },
        (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => {
            try {
              done(response.statusCode === 200 && JSON.parse(body).result === this.enode);
            } catch {
              done(false);
            }
          });
          response.on('error', () => done(false));
        },
      );
      request.setTimeout(POLL_TIMEOUT_MS, () => request.destroy(new Error('timeout')));
      request.on('error', () => done(false));
      request.end('{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}');
    });
  }

  /** Waits until the node answers (a poll sent after `after` succeeded), or `limitSeconds` passed. */
  async answeredAfter(after: number, limitSeconds: number): Promise<boolean> {
    const deadline = this.now() + limitSeconds;
    while (this.now() < deadline) {
      if (this.okAfter(after)) return true;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return false;
  }

  /** Whether a poll sent after `after` was answered. */
  okAfter(after: number): boolean {
    return this.polls.some((p) => p.ok && p.at > after);
  }

  /** Stops polling and returns the polls in order of sending. */
  async stop(): Promise<Poll[]> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.inFlight]);
    return [...this.polls].sort((a, b) => a.at - b.at);
  }
}

/** An outage seen by the probe: from the last answer before it to the first answer after it. */
interface Outage {
  from: number;
  to: number;
  failedPolls: number;
}

function outages(polls: Poll[]): Outage[] {
  const found: Outage[] = [];
  let lastOk: number | undefined;
  let failed = 0;
  let firstFailed: number | undefined;
  for (const poll of polls) {
    if (poll.ok) {
      if (failed > 0) found.push({ from: lastOk ?? firstFailed!, to: poll.at, failedPolls: failed });
      failed = 0;
      firstFailed = undefined;
      lastOk = poll.at;
    } else {
      failed++;
      firstFailed ??= poll.at;
    }
  }
  if (failed > 0) found.push({ from: lastOk ?? firstFailed!, to: Infinity, failedPolls: failed });
  return found;
}

const downtimeOf = (polls: Poll[]) => outages(polls).reduce((sum, o) => sum + (o.to - o.from), 0);

interface Timed {
  name: string;
  seconds: number;
}

/** How many times the short measurements (empty SSH session, archive fetch, bare restart) repeat in each cycle. */
const REPEATS = 3;

/** What one cycle (a fresh host: first provisioning, no-op, update) measured. */
interface Cycle {
  bootSeconds: number;
  sshSamples: number[];
  firstDeclareSeconds: number;
  firstTimed: Timed[];
  firstSeconds: number;
  /** The packages' download alone, and a cold `apt-get update` alone. */
  download?: { bytes: number; seconds: number; count: number; updateSeconds: number };
  fetchSamples: number[];
  archiveBytes: number;
  restartDowntimes: number[];
  restartAnswered: number[];
  againDeclareSeconds: number;
  noChange: string[];
  noChangeSeconds: number;
  rerunTimed: Timed[];
  rerunSeconds: number;
  nextDeclareSeconds: number;
  updateTimed: Timed[];
  updateSeconds: number;
  updateDowntime: number;
  updatePolls: number;
  updateUnanswered: number;
  updateOutages: number;
}

/**
 * Runs the SSH benchmark: `cycles` times (default 3), on a fresh test host each time, a first provisioning, a re-run
 * with no change and a release update; reports the median of each figure and its range.
 */
export async function benchSsh(cycles = 3): Promise<PartResult> {
  const heading = '## A deploy on the real SSH test host';
  const skipped = await withoutTestHosts('ssh', heading);
  if (skipped) return skipped;
  const recorded = recordProgram();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-bench-ssh-'));
  try {
    await packStandinReleases([FIRST, NEXT], work);
    const measured: Cycle[] = [];
    for (let cycle = 1; cycle <= cycles; cycle++) {
      progress(`ssh: cycle ${cycle}/${cycles}: starting test host ${HOST_NAME} (${HOST_INDEX})`);
      let host: TestHost | undefined;
      let files: FileServer | undefined;
      try {
        const bootStart = process.hrtime.bigint();
        host = await startTestHost(HOST_NAME, HOST_INDEX);
        const bootSeconds = since(bootStart);
        files = await startReleaseServer(host, work);
        measured.push(await runCycle(recorded, host, files.url, work, bootSeconds));
      } finally {
        await files?.close();
        await host?.stop();
      }
    }
    return { name: 'ssh', markdown: await report(measured) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** One cycle on a freshly booted host: first provisioning, the package and restart floors, no-op, update. */
async function runCycle(
  recorded: RecordedResource[],
  host: TestHost,
  fileUrl: string,
  work: string,
  bootSeconds: number,
): Promise<Cycle> {
  const stack = (version: string) =>
    sshWriterStack(host, {
      version,
      releaseBaseUrl: fileUrl,
      releaseDir: work,
      nodeName: 'bench-writer',
      dnsName: 'writer.bench.test',
      node: NODE,
    });
  const sh = async (command: string, timeoutMs = 120_000) => {
    const result = await host.ssh(command, { timeoutMs });
    if (result.code !== 0) throw new Error(`ssh ${command.slice(0, 80)}: exit ${result.code}: ${result.stderr}`);
    return result.stdout.trim();
  };
  /** Runs a command on the host (as root) and returns its own duration there, without the SSH session's. */
  const timedOnHost = async (command: string): Promise<number> => {
    const out = await sh(
      `start=$(date +%s%N); ( ${command} ) >/dev/null 2>&1 || exit $?; end=$(date +%s%N); echo "elapsed $((end - start))"`,
      600_000,
    );
    const match = /elapsed (\d+)$/.exec(out);
    if (!match) throw new Error(`no duration from the host: ${out}`);
    return Number(match[1]) / 1e9;
  };
  const runSteps = async (steps: Step[]): Promise<Timed[]> =>
    (await runRemoteSteps(host, steps)).map(({ name, seconds }) => ({ name: name.replace(`${NODE}-`, ''), seconds }));

  // What a step pays only for being a separate SSH session: connect, authenticate, sudo, run nothing.
  const sshSamples: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const start = process.hrtime.bigint();
    const result = await host.ssh('sudo -n bash -s', { user: host.sudoUser, input: 'true\n' });
    if (result.code !== 0) throw new Error(`ssh: an empty session failed: ${result.stderr}`);
    sshSamples.push(since(start));
  }

  // First provisioning.
  progress('ssh: first provisioning');
  const declareStart = process.hrtime.bigint();
  const first = await declareProgram(recorded, 'testnet', stack(FIRST), {});
  const firstDeclareSeconds = since(declareStart);
  const enode = (await settle(first.outputs.nodes[NODE].enode)).value as string;
  const firstSteps = commands(first);
  const provisionStart = process.hrtime.bigint();
  const firstTimed = await runSteps(firstSteps);
  const firstSeconds = since(provisionStart);
  const firstProbe = new RpcProbe(host.ip, enode);
  const answering = await firstProbe.answeredAfter(0, 30);
  await firstProbe.stop();
  if (!answering) throw new Error(`the node does not answer net_enode ${enode} on ${host.ip}:${RPC_PORT}`);

  // The package work split: the same .deb files downloaded alone through the same proxy from the same mirror (into
  // an empty folder, the apt cache emptied first), then the package lists fetched again from scratch.
  progress('ssh: the package download alone, and apt-get update alone');
  const debs = (await sh('ls /var/cache/apt/archives/ | grep "\\.deb$" || true')).split('\n').filter(Boolean);
  let download: Cycle['download'];
  if (debs.length > 0) {
    const bytes = Number((await sh('cat /var/cache/apt/archives/*.deb | wc -c')).split('\n').pop());
    const wanted = debs.map((file) => {
      const [name, version] = file.replace(/\.deb$/, '').split('_');
      return `${name}=${decodeURIComponent(version)}`;
    });
    await sh('apt-get clean && rm -rf /tmp/bench-dl && mkdir /tmp/bench-dl');
    const fetched = await timedOnHost(`cd /tmp/bench-dl && apt-get download -q ${wanted.join(' ')}`);
    const got = await sh('ls /tmp/bench-dl | grep -c "\\.deb$" || true');
    await sh('rm -rf /tmp/bench-dl');
    if (Number(got) !== debs.length) throw new Error(`apt-get download fetched ${got} of ${debs.length} packages`);
    const update = await timedOnHost('rm -rf /var/lib/apt/lists/* && apt-get update -q');
    download = { bytes, seconds: fetched, count: debs.length, updateSeconds: update };
  }

  // The release archive alone, as the release step fetches it (curl's own time, on the host).
  const fetchSamples: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    fetchSamples.push(await timedOnHost(`curl -fsS -o /dev/null ${fileUrl}/besu-${NEXT}.tar.gz`));
  }
  const archiveBytes = fs.statSync(path.join(work, `besu-${NEXT}.tar.gz`)).size;

  // The node's own restart: timed on the host from `systemctl restart` until it answers net_enode (polled every
  // 50 ms, at most 60 s), and seen from outside by the same probe as the update's downtime.
  progress('ssh: the node restart alone');
  const restartDowntimes: number[] = [];
  const restartAnswered: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const probe = new RpcProbe(host.ip, enode);
    await probe.answeredAfter(0, 30);
    const answered = await timedOnHost(
      `systemctl restart besu && for i in $(seq 1 1200); do ` +
        `curl -s --max-time 1 -H 'Host: localhost' -H 'Content-Type: application/json' ` +
        `--data '{"jsonrpc":"2.0","method":"net_enode","params":[],"id":1}' http://127.0.0.1:${RPC_PORT}/ ` +
        `| grep -q '"result"' && exit 0; sleep 0.05; done; exit 1`,
    );
    await probe.answeredAfter(probe.now(), 60);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const polls = await probe.stop();
    restartDowntimes.push(downtimeOf(polls));
    restartAnswered.push(answered);
    progress(
      `ssh: restart: answers after ${answered.toFixed(2)} s; seen down from outside ${downtimeOf(polls).toFixed(2)} s`,
    );
  }

  // A re-run with no change.
  progress('ssh: re-run with no change');
  const againStart = process.hrtime.bigint();
  const again = await declareProgram(recorded, 'testnet', stack(FIRST), {});
  const againDeclareSeconds = since(againStart);
  const noChange = changed(firstSteps, commands(again));
  const noChangeRunStart = process.hrtime.bigint();
  await runSteps(noChange);
  const noChangeSeconds = againDeclareSeconds + since(noChangeRunStart);
  // For comparison: what running every idempotent step anyway (as a tool without change detection does) costs.
  progress('ssh: for comparison, the idempotent steps run anyway');
  const rerunStart = process.hrtime.bigint();
  const rerunTimed = await runSteps(firstSteps.filter((s) => !s.name.endsWith('-start')));
  const rerunSeconds = since(rerunStart);

  // The release update, with the outside probe running.
  progress(`ssh: update ${FIRST} -> ${NEXT}`);
  const nextDeclareStart = process.hrtime.bigint();
  const next = await declareProgram(recorded, 'testnet', stack(NEXT), {});
  const nextDeclareSeconds = since(nextDeclareStart);
  const updateSteps = changed(firstSteps, commands(next));
  const probe = new RpcProbe(host.ip, enode);
  await probe.answeredAfter(0, 30);
  const updateStart = process.hrtime.bigint();
  let updateTimed: Timed[];
  let updateSeconds: number;
  try {
    updateTimed = await runSteps(updateSteps);
    updateSeconds = since(updateStart);
  } finally {
    // Go on polling until the node answers again (the start step waits for it too), and a little after.
    await probe.answeredAfter(probe.now(), 60);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const updatePolls = await probe.stop();
  const updateOutages = outages(updatePolls);
  const version = JSON.parse(
    await sh(
      `curl -s -H 'Host: localhost' -H 'Content-Type: application/json' --data '{"jsonrpc":"2.0","method":"web3_clientVersion","params":[],"id":1}' http://127.0.0.1:${RPC_PORT}/`,
    ),
  ).result as string;
  if (!version.startsWith(`besu/v${NEXT}/`)) throw new Error(`after the update the node runs ${version}`);
  progress(
    `ssh: update: ${updateSeconds.toFixed(2)} s; seen down from outside ${downtimeOf(updatePolls).toFixed(2)} s`,
  );

  return {
    bootSeconds,
    sshSamples,
    firstDeclareSeconds,
    firstTimed,
    firstSeconds,
    download,
    fetchSamples,
    archiveBytes,
    restartDowntimes,
    restartAnswered,
    againDeclareSeconds,
    noChange: noChange.map((s) => s.name),
    noChangeSeconds,
    rerunTimed,
    rerunSeconds,
    nextDeclareSeconds,
    updateTimed,
    updateSeconds,
    updateDowntime: downtimeOf(updatePolls),
    updatePolls: updatePolls.length,
    updateUnanswered: updatePolls.filter((p) => !p.ok).length,
    updateOutages: updateOutages.length,
  };
}

/** What each step does on the bench's host: one note per step of REMOTE_STEP_NAMES (the type asks for every one). */
const STEP_NOTES: Record<RemoteStepName, string> = {
  preflight: 'system, CPU, memory, disk checks',
  packages: 'apt-get update, install Java 17, nginx-light, openssl, curl, … through the apt proxy',
  release: 'download the release archive from the file server, unpack',
  'node-files': 'service user, config.toml, genesis, launcher, systemd unit, logrotate',
  'node-key': 'the node key, mode 0600; the backup environment',
  backups: "the node's backup command, restic init of its repository on the machine",
  proxy: 'nginx site, self-signed RSA-2048 certificate',
  firewall: 'no ufw/firewalld active on the host: nothing to open',
  start: 'switch release, restart, wait for net_enode (checked once a second)',
  companions: "the writer's relay signer (a stand-in) from the file server, its fences, its systemd service",
};

/** How many steps a provisioning runs, and how many of them run again with no change (all but start). */
const STEPS = REMOTE_STEP_NAMES.length;
const IDEMPOTENT_STEPS = STEPS - 1;

/** "median (min–max)" of some samples. */
function spread(values: number[]): string {
  if (values.length < 2) return fixed(values[0]);
  return `${fixed(median(values))} (${fixed(Math.min(...values))}–${fixed(Math.max(...values))})`;
}

async function report(cycles: Cycle[]): Promise<string> {
  const m = (pick: (c: Cycle) => number) => median(cycles.map(pick));
  const all = (pick: (c: Cycle) => number[]) => cycles.flatMap(pick);
  const stepSamples = (pick: (c: Cycle) => Timed[], name: string) =>
    cycles.map((c) => pick(c).find((t) => t.name === name)?.seconds ?? NaN);
  const stepRows = (pick: (c: Cycle) => Timed[]) =>
    pick(cycles[0]).map((t) => [t.name, spread(stepSamples(pick, t.name)), STEP_NOTES[t.name as RemoteStepName] ?? '']);
  /** The table of the first provisioning's or the update's steps, then its total and the program's evaluation. */
  const stepsTable = (run: 'first' | 'update') => {
    const first = run === 'first';
    const pick = (c: Cycle) => (first ? c.firstTimed : c.updateTimed);
    const total = (c: Cycle) => (first ? c.firstSeconds : c.updateSeconds);
    const declare = (c: Cycle) => (first ? c.firstDeclareSeconds : c.nextDeclareSeconds);
    const declared = first
      ? 'declaring the stack in-process (recording engine); `pulumi up` adds its engine'
      : 'declaring the stack with the new release';
    return table(
      ['Step', 'Time (s)', 'What it does'],
      [
        ...stepRows(pick),
        [`**total (${pick(cycles[0]).length} steps)**`, `**${spread(cycles.map(total))}**`, ''],
        ['program evaluation', spread(cycles.map(declare)), declared],
      ],
    );
  };

  const sshSeconds = median(all((c) => c.sshSamples));
  const fetchSeconds = median(all((c) => c.fetchSamples));
  const restartAnswer = median(all((c) => c.restartAnswered));
  const restartDown = median(all((c) => c.restartDowntimes));
  const packages = median(stepSamples((c) => c.firstTimed, 'packages'));
  const firstStart = median(stepSamples((c) => c.firstTimed, 'start'));
  const firstSeconds = m((c) => c.firstSeconds);
  const updateSeconds = m((c) => c.updateSeconds);
  const updateDown = m((c) => c.updateDowntime);
  const firstFloor = packages + fetchSeconds + restartAnswer;
  const updateFloor = fetchSeconds + restartAnswer;
  const beyond = updateDown - restartDown;
  const noChangeCounts = cycles.map((c) => c.noChange.length);
  const mb = (bytes: number) => bytes / 1e6;
  const runs = cycles.length;
  const repeats = runs * REPEATS;

  const lines: string[] = [];
  lines.push('## A deploy on the real SSH test host');
  lines.push('');
  lines.push(`Measured ${now()} on ${await machine()}.`);
  lines.push('');
  lines.push(
    `${runs} cycle(s), each on a freshly booted test host (\`startTestHost('${HOST_NAME}', ${HOST_INDEX})\`: Debian 12 in ` +
      'systemd-nspawn with real systemd and sshd, apt through a proxy on its gateway to the Debian mirror; booting ' +
      `it took ${spread(cycles.map((c) => c.bootSeconds))} s, not part of a deploy): a first provisioning, a re-run with ` +
      `no change and a release update ${FIRST} -> ${NEXT}. Figures are medians over the cycles (range in brackets). ` +
      'The program is declared under the recording engine (as `pulumi up` declares it) and each `remote.Command` is ' +
      "run over real SSH in order, with the provider's command and standard input, as `operator` through " +
      '`sudo -n`, one SSH session per step as the command provider opens one. The release archives hold the Besu ' +
      'stand-in (a Python test fixture, not Besu): a real Besu release (about 100 MB) downloads and starts (tens of ' +
      'seconds on the JVM) more slowly, so the release and start figures are those of the fixture.',
  );
  lines.push('');
  lines.push('### First provisioning');
  lines.push('');
  lines.push(stepsTable('first'));
  lines.push('');
  lines.push(
    `Lower bound: ${fixed(firstFloor)} s = the packages step ${fixed(packages)} s (package download and install, which ` +
      `any deploy on a fresh machine pays) + the release download ${fixed(fetchSeconds, 3)} s (the ` +
      `${fixed(mb(cycles[0].archiveBytes), 3)} MB archive, curl alone) + the node's own start ${fixed(restartAnswer)} s ` +
      `(\`systemctl restart\` until it answers net_enode, timed on the host, median of ${repeats}). The first ` +
      `provisioning, ${fixed(firstSeconds)} s, is ${fixed(firstSeconds - firstFloor)} s (${fixed(firstSeconds / firstFloor)}x) ` +
      `above it: the ${STEPS - 2} other steps (all but packages and start), of which ${fixed(STEPS * sshSeconds)} s is opening ${STEPS} SSH sessions ` +
      `(${fixed(sshSeconds, 3)} s each, median of ${repeats} empty \`sudo -n bash -s\` sessions), and the start step's ` +
      `${fixed(firstStart)} s against the node's own ${fixed(restartAnswer)} s (the step checks net_enode once a second).`,
  );
  const withDownload = cycles.filter((c) => c.download);
  if (withDownload.length > 0) {
    const d = (pick: (x: NonNullable<Cycle['download']>) => number) =>
      median(withDownload.map((c) => pick(c.download!)));
    const dpkg = packages - d((x) => x.seconds) - d((x) => x.updateSeconds);
    lines.push('');
    lines.push(
      `Within the packages step: downloading the same ${withDownload[0].download!.count} packages ` +
        `(${fixed(mb(d((x) => x.bytes)), 1)} MB) alone through the same proxy and mirror (\`apt-get download\`, apt ` +
        `cache emptied, timed on the host) takes ${fixed(d((x) => x.seconds))} s, and a cold \`apt-get update\` alone ` +
        `${fixed(d((x) => x.updateSeconds))} s; the rest, about ${fixed(dpkg)} s, is unpacking and configuring them with ` +
        'dpkg (mostly the Java runtime). All three are what any package-based install pays.',
    );
  }
  lines.push('');
  lines.push('### Re-run with no change');
  lines.push('');
  lines.push(
    table(
      ['What', 'Commands run on the machine', 'Time (s)'],
      [
        [
          'declare again with the same settings; run the commands whose inputs changed',
          `**${noChangeCounts.join(', ')}**`,
          spread(cycles.map((c) => c.noChangeSeconds)),
        ],
        [
          `for comparison: the ${IDEMPOTENT_STEPS} idempotent steps (all but start) run anyway, as without change detection`,
          String(cycles[0].rerunTimed.length),
          spread(cycles.map((c) => c.rerunSeconds)),
        ],
      ],
    ),
  );
  lines.push('');
  const allZero = noChangeCounts.every((n) => n === 0);
  lines.push(
    `Target: zero commands run on the machine: ${verdict(allZero)} (${noChangeCounts.join(', ')} in ` +
      `${runs} cycle(s)). The lower bound is evaluating the program, ${fixed(m((c) => c.againDeclareSeconds))} s here: ` +
      `all of the no-op's cost. \`pulumi up\` adds its engine's diff of the ${STEPS} commands' inputs against the state, ` +
      'without contacting the machine.',
  );
  lines.push('');
  lines.push(`### Release update ${FIRST} -> ${NEXT}`);
  lines.push('');
  lines.push(stepsTable('update'));
  lines.push('');
  lines.push(
    `Commands run: ${cycles[0].updateTimed.map((t) => t.name).join(', ')} (the other steps' inputs did not change). ` +
      `Lower bound: ${fixed(updateFloor)} s = the new release's download ${fixed(fetchSeconds, 3)} s + the node's own ` +
      `restart until it answers ${fixed(restartAnswer)} s. The update, ${fixed(updateSeconds)} s, is ` +
      `${fixed(updateSeconds - updateFloor)} s above it: ${fixed(2 * sshSeconds)} s of it opening 2 SSH sessions, the ` +
      "rest unpacking the release and the start step's once-a-second check.",
  );
  lines.push('');
  lines.push('### RPC downtime during the update');
  lines.push('');
  lines.push(
    table(
      ['What', 'Downtime (s)', 'How measured'],
      [
        [
          'the update (release + start)',
          `**${spread(cycles.map((c) => c.updateDowntime))}**`,
          cycles
            .map((c) => `${c.updatePolls} polls, ${c.updateUnanswered} unanswered, ${c.updateOutages} outage(s)`)
            .join('; '),
        ],
        [
          "the node's own restart (`systemctl restart besu` alone)",
          spread(all((c) => c.restartDowntimes)),
          `${repeats} restarts, seen by the same probe`,
        ],
        ['**beyond the restart**', `**${fixed(beyond)}**`, 'median of the update minus median of the restart alone'],
      ],
    ),
  );
  lines.push('');
  lines.push(
    `Polled from outside: POST \`net_enode\` to \`http://<host>:${RPC_PORT}/\` every ${POLL_MS} ms, each request ` +
      `limited to ${POLL_TIMEOUT_MS} ms; a poll counts only when it answers the stack's enode. Downtime runs from the ` +
      `last answer before an outage to the first answer after it (resolution ${POLL_MS} ms). Target: under ` +
      `${DOWNTIME_TARGET_SECONDS} s beyond the node's own restart: ${verdict(beyond < DOWNTIME_TARGET_SECONDS)} ` +
      `(${fixed(beyond)} s). Lower bound: the node's own restart, ${fixed(restartDown)} s seen from outside; the new ` +
      'release is downloaded and unpacked while the old one still runs, so it adds no downtime.',
  );
  return lines.join('\n');
}
