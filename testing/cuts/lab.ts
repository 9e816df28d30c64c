/**
 * The fault-injection harness of the SSH path (issue: cut anywhere): a change run on a real test host, cut at a chosen
 * moment of one of its remote steps, recovered as docs/operations.md says (run `pulumi up` again: the cut command and
 * every command after it run again), and judged by the invariants (testing/cuts/invariants.ts), at the cut and after
 * the recovery. Shared by the test tier's fixed sample (tests/e2e/cuts.test.ts) and the whole matrix
 * (`npm run bench -- --only cuts`).
 *
 * Stand-ins: the Besu stand-in (tests/fixtures/besu-standin) and the companions' stand-ins; everything else is real
 * (systemd, sshd, apt, nginx, openssl, nftables on Debian 12 in systemd-nspawn).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { settle } from '../../tools/recording/engine';
import { recordProgram } from '../pulumi';
import { declareProgram } from '../program';
import { changedCommands, nodeKeyOf, remoteCommands, RemoteStep, runRemoteStep, runRemoteSteps } from '../replay';
import { REMOTE_STEP_NAMES } from '../../core/remote/steps';
import { javaMajorFor } from '../../core/catalog/besu';
import { JAVA_STANDIN_ARCHIVE, packJavaStandin } from '../javaStandin';
import { startTestHost, TestHost } from '../host/testHost';
import { packagesInstalledDisk } from '../host/packagesDisk';
import type { FileServer } from '../host/fileServer';
import { packStandinReleases, startReleaseServer } from '../standinReleases';
import { sshWriterStack } from '../sshStacks';
import { progress } from '../hostSuite';
import {
  armFailpoint,
  cutStep,
  CutKind,
  CutMoment,
  DiskFull,
  FAILPOINT,
  fillDisk,
  killSessionsOf,
  leftOnFullDisk,
  makeRoom,
  rerun,
  untilMoment,
} from './cut';
import { brokenAfterRecovery, brokenAtCut, Expected } from './invariants';
import {
  backupsOnMachine,
  fileDigests,
  nodeHead,
  reachableTcpPorts,
  resticCheck,
  restoreLeftovers,
  serviceActive,
  HOME,
} from './machineState';
import { startNpm } from '../run';
import { nodeToolArgs, operatorStackFile } from '../nodeTool';
import { BACKUP_REASONS, BACKUP_TAGS } from '../../core/catalog/backups';
import { DEFAULT_SERVICE_USER } from '../../core/catalog/defaults';
import { NODE_HOME_LAYOUT } from '../../core/catalog/remote';

/** An operator's command the harness cuts: `npm run node -- backup | restore | rollback`. */
export type Operation = 'backup' | 'restore' | 'rollback';

/**
 * A change the harness cuts: a first install of a release, an upgrade from one release to another, or an operator's
 * command on a node with releases installed.
 */
export interface Change {
  /** The releases installed one after the other before the change (none for a first install). */
  before: string[];
  /** The release the change installs (for an operation: the one the node runs after it). */
  release: string;
  /** The operator's command, when the change is one (restore: of a backup taken just before, on the same release). */
  operation?: Operation;
}

/** One cut: a change, the step cut (its name without the node's), how, and when. */
export interface CutCase {
  change: Change;
  step: string;
  kind: CutKind;
  at: CutMoment;
}

/** What one cut gave. */
export interface CutResult {
  case: CutCase;
  /** False when the step ended before the moment came (the cut then fell between it and the next). */
  cutInside: boolean;
  brokenAtCut: string[];
  brokenAfterRecovery: string[];
  /** The recovery's time: the re-run of the cut step and the ones after it, in seconds. */
  recoverySeconds: number;
}

/** An uncut change's record: each step's time and the state it leaves, which the cuts are judged against. */
export interface Reference {
  change: Change;
  stepSeconds: Record<string, number>;
  expected: Expected;
}

/** The change's name in tables: "install 24.1.0" or "upgrade 23.4.1 -> 24.1.0". */
export function changeName(change: Change): string {
  if (change.operation) return `${change.operation} on ${change.before[change.before.length - 1]}`;
  return change.before.length === 0
    ? `install ${change.release}`
    : `upgrade ${change.before[change.before.length - 1]} -> ${change.release}`;
}

/** A cut moment in tables: "+1.25 s" or "when dpkg runs". */
export function momentName(moment: CutMoment): string {
  return 'seconds' in moment ? `+${moment.seconds.toFixed(2)} s` : `when ${moment.what}`;
}

/** Whether a cut's moment is a disk filling up. */
export function isDiskFull(moment: CutMoment): moment is DiskFull {
  return 'folder' in moment;
}

const NODE = 'writer';
const shortName = (step: RemoteStep) => step.name.slice(NODE.length + 1);

/** What a node holds before a change. */
type Before = Omit<Expected, 'filesAfter' | 'reachableAfter'>;

/** One test host at a time, booted for each cut from a saved disk where one fits, with the releases served to it. */
export class CutLab {
  private readonly recorded = recordProgram();
  private host: TestHost | undefined;
  private files: FileServer | undefined;
  /** The Java runtime stand-in's digest (releases that need a Java Debian 12 does not offer get it). */
  private readonly javaSha256: string;
  /** The saved disks already made, by what they hold. */
  private readonly bases = new Set<string>();

  private constructor(
    private readonly hostName: string,
    private readonly hostIndex: number,
    private readonly work: string,
  ) {
    this.javaSha256 = packJavaStandin(work);
  }

  /** Packs the stand-in releases the changes name; hosts are booted as cases need them. */
  static async open(hostName: string, hostIndex: number, releases: string[]): Promise<CutLab> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-cuts-'));
    await packStandinReleases([...new Set(releases)], work);
    return new CutLab(hostName, hostIndex, work);
  }

  async close(): Promise<void> {
    await this.files?.close();
    await this.host?.stop();
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  /**
   * The uncut change on a host in the state before it: each step's time and the state it leaves. With
   * `packagesInstalled`, a first install runs on the packages-installed disk (testing/host/packagesDisk.ts), whose
   * packages step then finds everything there: its time is not a bare host's, so only for cuts that wait for a moment
   * of their own rather than a share of the step's time.
   */
  async reference(change: Change, options: { packagesInstalled?: boolean } = {}): Promise<Reference> {
    if (change.operation) return this.operationReference(change);
    const { host, steps, before } = await this.prepare(change, 0, options.packagesInstalled);
    const timed = await runRemoteSteps(host, steps);
    const expected: Expected = {
      ...before,
      filesAfter: await fileDigests(host),
      reachableAfter: await reachableTcpPorts(host),
    };
    // Its end state is the state before the next change: kept as that change's saved disk (over the disk it was
    // booted from, for an upgrade), so that no later case installs the releases again from a bare host.
    const next = beforeDisk([...change.before, change.release]);
    if (!this.bases.has(next)) await this.save(next);
    return {
      change,
      stepSeconds: Object.fromEntries(timed.map((t) => [t.name.slice(NODE.length + 1), t.seconds])),
      expected,
    };
  }

  /** One cut, judged against the uncut change's state, then the recovery, judged again. */
  async cut(reference: Reference, cutCase: CutCase): Promise<CutResult> {
    if (cutCase.change.operation) return this.cutOperation(reference, cutCase);
    const names = (await this.stepsOf(cutCase.change)).map(shortName);
    const at = names.indexOf(cutCase.step);
    if (at < 0) throw new Error(`${changeName(cutCase.change)} has no step ${cutCase.step}`);
    const { host, steps, before, done } = await this.prepare(cutCase.change, at);
    await rerun(host, steps.slice(done, at));
    progress(`cutting ${changeName(cutCase.change)} at ${cutCase.step} ${momentName(cutCase.at)} (${cutCase.kind})`);
    const how = howCut(cutCase);
    if ('disk' in how) {
      return this.judgeFullDisk(
        reference,
        cutCase,
        host,
        before,
        how.disk,
        async () => {
          const result = await runRemoteStep(host, steps[at]);
          return { code: result.code, message: lastLine(result.stderr || result.stdout) };
        },
        async () => rerun(host, steps.slice(at)),
      );
    }
    const outcome = await cutStep(host, steps[at], how.moment, how.kind);
    // This host's own state before the change (its head grew while it ran), and the uncut change's state after it.
    const expected: Expected = { ...reference.expected, ...before };
    const atCut = await brokenAtCut(host, expected);
    const started = Date.now();
    let afterRecovery: string[];
    try {
      await rerun(host, steps.slice(at));
      afterRecovery = await brokenAfterRecovery(host, expected);
    } catch (error) {
      afterRecovery = [(error as Error).message.split('\n')[0]];
    }
    return {
      case: cutCase,
      cutInside: outcome.cut,
      brokenAtCut: atCut,
      brokenAfterRecovery: afterRecovery,
      recoverySeconds: (Date.now() - started) / 1000,
    };
  }

  /** The uncut operator's command on a host with the releases before it installed: the state it leaves. */
  private async operationReference(change: Change): Promise<Reference> {
    const { host, before } = await this.prepareOperation(change, undefined);
    const started = Date.now();
    const run = await this.operation(host, change).result;
    if (run.code !== 0) throw new Error(`npm run node -- ${change.operation} failed: ${run.stderr.trim()}`);
    return {
      change,
      stepSeconds: { [change.operation!]: (Date.now() - started) / 1000 },
      expected: { ...before, filesAfter: await fileDigests(host), reachableAfter: await reachableTcpPorts(host) },
    };
  }

  /**
   * The operator's command cut at a moment (its process group killed and the SSH sessions it opened on the machine),
   * then run again as docs/operations.md says, and judged as a step's cut is, with the backups' own invariants too.
   */
  private async cutOperation(reference: Reference, cutCase: CutCase): Promise<CutResult> {
    const operation = cutCase.change.operation!;
    const { host, before } = await this.prepareOperation(cutCase.change, cutCase.at);
    progress(`cutting ${changeName(cutCase.change)} ${momentName(cutCase.at)}`);
    const how = howCut(cutCase);
    if ('disk' in how) {
      const run = async () => {
        const result = await this.operation(host, cutCase.change).result;
        return { code: result.code, message: lastLine(result.stderr) };
      };
      return this.judgeFullDisk(reference, cutCase, host, before, how.disk, run, async () => {
        const again = await run();
        if (again.code !== 0) throw new Error(`npm run node -- ${operation} again failed: ${again.message}`);
      });
    }
    const command = this.operation(host, cutCase.change);
    let ended: number | undefined;
    void command.result.then((result) => (ended = result.code));
    await untilMoment(host, how.moment, () => ended !== undefined);
    const cutInside = ended === undefined;
    // The machine's side first, at once (the harshest cut: nothing there gets to react to the lost connection), then
    // the operator's command.
    await killSessionsOf(host, host.sudoUser);
    command.kill();
    await command.result;
    await host.ssh(`rm -f ${FAILPOINT.armed} ${FAILPOINT.hit}`);
    const expected: Expected = { ...reference.expected, ...before };
    const atCut = await brokenAtCut(host, expected);
    const started = Date.now();
    let afterRecovery: string[];
    const again = await this.operation(host, cutCase.change).result;
    if (again.code !== 0) {
      afterRecovery = [`npm run node -- ${operation} again failed: ${lastLine(again.stderr)}`];
    } else {
      afterRecovery = [...(await brokenAfterRecovery(host, expected)), ...(await resticBroken(host))];
      for (const left of await restoreLeftovers(host)) afterRecovery.push(`left beside the data: ${left}`);
    }
    return {
      case: cutCase,
      cutInside,
      brokenAtCut: atCut,
      brokenAfterRecovery: afterRecovery,
      recoverySeconds: (Date.now() - started) / 1000,
    };
  }

  /**
   * A disk filling up under a step or an operator's command (`run`): it must fail by itself, saying the disk is full,
   * leave nothing of its own on that disk and keep every invariant (and the backups' own, for a backup); then the
   * operator makes room and runs it again (`recover`), and the node converges as after any other cut.
   */
  private async judgeFullDisk(
    reference: Reference,
    cutCase: CutCase,
    host: TestHost,
    before: Before,
    disk: DiskFull,
    run: () => Promise<{ code: number; message: string }>,
    recover: () => Promise<void>,
  ): Promise<CutResult> {
    const expected: Expected = { ...reference.expected, ...before };
    const backupsBefore = (await backupsOnMachine(host)).length;
    const held = await fillDisk(host, disk);
    const outcome = await run();
    const atCut = await brokenAtCut(host, expected);
    if (outcome.code === 0) atCut.push(`it did not meet a full disk (it succeeded with ${disk.freeKib} KiB free)`);
    else if (!/is full|no space left/i.test(outcome.message)) {
      atCut.push(`its failure does not say the disk is full: ${outcome.message}`);
    }
    for (const left of await leftOnFullDisk(host, disk, held)) atCut.push(`left on the full disk: ${left}`);
    if (cutCase.change.operation) atCut.push(...(await this.backupsBroken(host, backupsBefore)));
    if (!(await serviceActive(host))) atCut.push('the node is not running after the failure');
    progress(`full disk: ${outcome.message}`);
    const started = Date.now();
    let afterRecovery: string[];
    try {
      await makeRoom(host, disk);
      await recover();
      afterRecovery = await brokenAfterRecovery(host, expected);
      if (cutCase.change.operation) afterRecovery.push(...(await this.backupsBroken(host, backupsBefore + 1)));
    } catch (error) {
      afterRecovery = [(error as Error).message.split('\n')[0]];
    }
    return {
      case: cutCase,
      cutInside: outcome.code !== 0,
      brokenAtCut: atCut,
      brokenAfterRecovery: afterRecovery,
      recoverySeconds: (Date.now() - started) / 1000,
    };
  }

  /** The backups' own invariants: `restic check` passes and the node has `count` backups. */
  private async backupsBroken(host: TestHost, count: number): Promise<string[]> {
    const broken = await resticBroken(host);
    const backups = (await backupsOnMachine(host)).length;
    if (backups !== count) broken.push(`${backups} backups, not ${count}`);
    return broken;
  }

  /**
   * A host with the releases before the operation installed (a saved disk), a manual backup taken first for a
   * restore, the failpoint of `at` armed; and what the node holds before (for a restore or a rollback, the head
   * recorded in the backup it puts back: the node must reach at least that).
   */
  private async prepareOperation(
    change: Change,
    at: CutMoment | undefined,
  ): Promise<{ host: TestHost; before: Before }> {
    await this.bootBefore(change.before);
    const host = this.host!;
    if (change.operation === 'backup') {
      // A data folder big enough for restic to be seen at work (the stand-in's own data is a few bytes): random bytes,
      // which restic can neither compress nor find again in the repository.
      const filler = await host.ssh(
        `runuser -u ${DEFAULT_SERVICE_USER} -- head -c ${BACKUP_FILLER_MIB}M /dev/urandom > ${HOME}/${NODE_HOME_LAYOUT.dataDir}/filler.bin`,
      );
      if (filler.code !== 0) throw new Error(`cannot write the data filler: ${filler.stderr}`);
    }
    if (change.operation === 'restore') {
      const backup = await this.operation(host, { ...change, operation: 'backup' }).result;
      if (backup.code !== 0) throw new Error(`the backup before the restore failed: ${backup.stderr.trim()}`);
    }
    if (at && 'failpoint' in at && at.failpoint) await armFailpoint(host, 'mv', at.failpoint);
    const declared = await this.declare(host, change.before[change.before.length - 1]);
    const backups = await backupsOnMachine(host);
    const restored =
      change.operation === 'restore'
        ? backups[backups.length - 1]
        : change.operation === 'rollback'
          ? [...backups]
              .reverse()
              .find((b) => b.tags.includes(`${BACKUP_TAGS.reason}=${BACKUP_REASONS.beforeReleaseChange}`))
          : undefined;
    const recordedHead = restored?.tags.find((tag) => tag.startsWith(`${BACKUP_TAGS.head}=`))?.split('=')[1];
    return {
      host,
      before: {
        key: nodeKeyOf(remoteCommands(declared.declared)),
        enode: declared.enode,
        filesBefore: await fileDigests(host),
        headBefore: restored ? Number(recordedHead ?? 0) : ((await nodeHead(host)) ?? 0),
        releaseAfter: `besu-${change.release}`,
      },
    };
  }

  /**
   * `npm run node -- <operation>` for the lab's node, as its operator runs it: the stack file as last deployed (the
   * newest release before the change), the SSH key.
   */
  private operation(host: TestHost, change: Change) {
    const config = sshWriterStack(host, this.stackOptions(change.before[change.before.length - 1]));
    const configFile = operatorStackFile(this.work, config);
    return startNpm('node', [change.operation!, ...nodeToolArgs(configFile, host.privateKeyFile)]);
  }

  /** Installs the releases one after the other, as `pulumi up` of each would (over the release `from`, if any). */
  private async installAll(host: TestHost, releases: string[], from?: string): Promise<void> {
    let previous: RemoteStep[] = from ? await this.steps(host, from) : [];
    for (const release of releases) {
      const steps = await this.steps(host, release);
      await rerun(host, changedCommands(previous, steps));
      previous = steps;
    }
  }

  /** The change's steps, by name, as `pulumi up` runs them (declared for a throw-away host address). */
  private async stepsOf(change: Change): Promise<RemoteStep[]> {
    if (!this.host) await this.boot();
    const all = (release: string) => this.steps(this.host!, release);
    const previous = change.before.length > 0 ? await all(change.before[change.before.length - 1]) : [];
    return changedCommands(previous, await all(change.release));
  }

  /**
   * A host in the state before the change, with the change's steps (every step for a first install, the ones whose
   * inputs change for an upgrade: what `pulumi up` runs), and how many of them are already done: booted from a saved
   * disk with the releases before the change installed, or, for a step after the packages of a first install, with the
   * packages installed (the slowest step, the same for every later cut); `packagesInstalled`: a first install on the
   * packages-installed disk.
   */
  private async prepare(
    change: Change,
    cutAt: number,
    packagesInstalled = false,
  ): Promise<{ host: TestHost; steps: RemoteStep[]; before: Before; done: number }> {
    let done = 0;
    if (change.before.length > 0) {
      await this.bootBefore(change.before);
    } else if (packagesInstalled) {
      await this.boot(await packagesInstalledDisk());
    } else if (cutAt > PACKAGES_AT) {
      await this.bootFrom(`packages-${change.release}`, async () => {
        const host = await this.boot();
        await rerun(host, (await this.steps(host, change.release)).slice(0, PACKAGES_AT + 1));
      });
      done = PACKAGES_AT + 1;
    } else {
      await this.boot();
    }
    const host = this.host!;
    const previous = change.before.length > 0 ? await this.steps(host, change.before[change.before.length - 1]) : [];
    const declared = await this.declare(host, change.release);
    const all = remoteCommands(declared.declared);
    return {
      host,
      steps: changedCommands(previous, all),
      done,
      before: {
        key: nodeKeyOf(all),
        enode: declared.enode,
        filesBefore: change.before.length > 0 ? await fileDigests(host) : {},
        headBefore: change.before.length > 0 ? ((await nodeHead(host)) ?? 0) : 0,
        releaseAfter: `besu-${change.release}`,
      },
    };
  }

  /** Boots the lab's host afresh: from the saved disk `base`, or the bare test host. */
  private async boot(base?: string): Promise<TestHost> {
    await this.files?.close();
    await this.host?.stop();
    this.host = await startTestHost(this.hostName, this.hostIndex, base ? { base } : {});
    this.files = await startReleaseServer(this.host, this.work);
    return this.host;
  }

  /** Boots from the saved disk `name`, making it first (`make` boots a host and changes it, then it is saved). */
  private async bootFrom(name: string, make: () => Promise<void>): Promise<void> {
    if (!this.bases.has(name)) {
      await make();
      await this.save(name);
    }
    await this.boot(this.disk(name));
  }

  /**
   * Boots a host with `releases` installed one after the other, from their saved disk; makes it first when there is
   * none, over the saved disk of the most of them already installed (a reference's end state), else on a bare host.
   */
  private async bootBefore(releases: string[]): Promise<void> {
    const name = beforeDisk(releases);
    await this.bootFrom(name, async () => {
      let installed = releases.length - 1;
      while (installed > 0 && !this.bases.has(beforeDisk(releases.slice(0, installed)))) installed--;
      const host = await this.boot(installed > 0 ? this.disk(beforeDisk(releases.slice(0, installed))) : undefined);
      await this.installAll(host, releases.slice(installed), releases[installed - 1]);
    });
  }

  /** The folder of the saved disk `name`. */
  private disk(name: string): string {
    return path.join(this.work, 'disks', name);
  }

  /** Stops the host in order and keeps its disk as the saved disk `name` (over the saved disk it was booted from). */
  private async save(name: string): Promise<void> {
    await this.files?.close();
    this.files = undefined;
    await this.host!.stopAndSave(this.disk(name));
    this.host = undefined;
    this.bases.add(name);
  }

  private async steps(host: TestHost, release: string): Promise<RemoteStep[]> {
    return remoteCommands((await this.declare(host, release)).declared);
  }

  /** The lab's stack of one SSH writer running `release`. */
  private stackOptions(release: string) {
    return {
      version: release,
      releaseBaseUrl: this.files!.url,
      releaseDir: this.work,
      nodeName: 'cuts-writer',
      dnsName: 'writer.cuts.test',
      // Debian 12 offers no Java 21: the releases that need it get the pinned runtime's stand-in.
      ...(javaMajorFor(release) > DEBIAN_JAVA
        ? { javaRuntime: { url: `${this.files!.url}/${JAVA_STANDIN_ARCHIVE}`, sha256: this.javaSha256 } }
        : {}),
    };
  }

  private async declare(host: TestHost, release: string) {
    const config = sshWriterStack(host, this.stackOptions(release));
    const declared = await declareProgram(this.recorded, 'testnet', config, {});
    const enode = (await settle(declared.outputs.nodes[NODE].enode)).value as string;
    return { declared, enode };
  }
}

/** The last meaningful line of a command's error output. */
const lastLine = (text: string) => text.trim().split('\n').pop() ?? '';

/** `restic check` of the node's repository, as a broken invariant when it fails. */
async function resticBroken(host: TestHost): Promise<string[]> {
  const check = await resticCheck(host);
  return check ? [`restic check fails: ${check}`] : [];
}

/**
 * What a cut does: fill a disk (a `disk` cut), or cut at a moment (the others). A kind and a moment that disagree are
 * the harness's mistake.
 */
function howCut(
  cutCase: CutCase,
): { disk: DiskFull } | { moment: Exclude<CutMoment, DiskFull>; kind: Exclude<CutKind, 'disk'> } {
  const { at, kind } = cutCase;
  if (isDiskFull(at) && kind === 'disk') return { disk: at };
  if (!isDiskFull(at) && kind !== 'disk') return { moment: at, kind };
  throw new Error(`a ${kind} cut cannot be ${momentName(at)}`);
}

/** The saved disk of a node with `releases` installed one after the other. */
const beforeDisk = (releases: string[]) => `before-${releases.join('-')}`;

/** The data filler a cut backup copies, in MiB (a few seconds of restic's work here). */
export const BACKUP_FILLER_MIB = 256;

/** Where the packages step is among a first install's steps. */
const PACKAGES_AT = REMOTE_STEP_NAMES.indexOf('packages');
/** The newest Java major Debian 12 (the test hosts) offers. */
const DEBIAN_JAVA = 17;
