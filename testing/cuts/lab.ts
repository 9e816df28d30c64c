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
import { changedCommands, nodeKeyOf, remoteCommands, RemoteStep, runRemoteSteps } from '../replay';
import { REMOTE_STEP_NAMES } from '../../core/remote/steps';
import { javaMajorFor } from '../../core/catalog/besu';
import { JAVA_STANDIN_ARCHIVE, packJavaStandin } from '../javaStandin';
import { startTestHost, TestHost } from '../host/testHost';
import type { FileServer } from '../host/fileServer';
import { packStandinReleases, startReleaseServer } from '../standinReleases';
import { sshWriterStack } from '../sshStacks';
import { progress } from '../hostSuite';
import { cutStep, CutKind, CutMoment, rerun } from './cut';
import { brokenAfterRecovery, brokenAtCut, Expected } from './invariants';
import { fileDigests, nodeHead, reachableTcpPorts } from './machineState';

/** A change the harness cuts: a first install of a release, or an upgrade from one release to another. */
export interface Change {
  /** The releases installed one after the other before the change (none for a first install). */
  before: string[];
  /** The release the change installs. */
  release: string;
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
  return change.before.length === 0
    ? `install ${change.release}`
    : `upgrade ${change.before[change.before.length - 1]} -> ${change.release}`;
}

/** A cut moment in tables: "+1.25 s" or "when dpkg runs". */
export function momentName(moment: CutMoment): string {
  return 'seconds' in moment ? `+${moment.seconds.toFixed(2)} s` : `when ${moment.what}`;
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

  /** The uncut change on a host in the state before it: each step's time and the state it leaves. */
  async reference(change: Change): Promise<Reference> {
    const { host, steps, before } = await this.prepare(change, 0);
    const timed = await runRemoteSteps(host, steps);
    const expected: Expected = {
      ...before,
      filesAfter: await fileDigests(host),
      reachableAfter: await reachableTcpPorts(host),
    };
    // Its end state is the state before the next change: kept as that change's saved disk when booted bare.
    const next = beforeDisk([...change.before, change.release]);
    if (change.before.length === 0) await this.save(next);
    return {
      change,
      stepSeconds: Object.fromEntries(timed.map((t) => [t.name.slice(NODE.length + 1), t.seconds])),
      expected,
    };
  }

  /** One cut, judged against the uncut change's state, then the recovery, judged again. */
  async cut(reference: Reference, cutCase: CutCase): Promise<CutResult> {
    const names = (await this.stepsOf(cutCase.change)).map(shortName);
    const at = names.indexOf(cutCase.step);
    if (at < 0) throw new Error(`${changeName(cutCase.change)} has no step ${cutCase.step}`);
    const { host, steps, before, done } = await this.prepare(cutCase.change, at);
    await rerun(host, steps.slice(done, at));
    progress(`cutting ${changeName(cutCase.change)} at ${cutCase.step} ${momentName(cutCase.at)} (${cutCase.kind})`);
    const outcome = await cutStep(host, steps[at], cutCase.at, cutCase.kind);
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
   * packages installed (the slowest step, the same for every later cut).
   */
  private async prepare(
    change: Change,
    cutAt: number,
  ): Promise<{ host: TestHost; steps: RemoteStep[]; before: Before; done: number }> {
    let done = 0;
    if (change.before.length > 0) {
      await this.bootFrom(beforeDisk(change.before), async (host) => {
        let previous: RemoteStep[] = [];
        for (const release of change.before) {
          const steps = await this.steps(host, release);
          await rerun(host, changedCommands(previous, steps));
          previous = steps;
        }
      });
    } else if (cutAt > PACKAGES_AT) {
      await this.bootFrom(`packages-${change.release}`, async (host) =>
        rerun(host, (await this.steps(host, change.release)).slice(0, PACKAGES_AT + 1)),
      );
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
    await this.host?.stop({ hard: true });
    this.host = await startTestHost(this.hostName, this.hostIndex, base ? { base } : {});
    this.files = await startReleaseServer(this.host, this.work);
    return this.host;
  }

  /** Boots from the saved disk `name`, making it first (`make` on a bare host, then saved) when there is none. */
  private async bootFrom(name: string, make: (host: TestHost) => Promise<void>): Promise<void> {
    if (!this.bases.has(name)) {
      await make(await this.boot());
      await this.save(name);
    }
    await this.boot(path.join(this.work, 'disks', name));
  }

  /** Stops the host (booted bare) in order and keeps its disk as the saved disk `name`. */
  private async save(name: string): Promise<void> {
    await this.files?.close();
    this.files = undefined;
    await this.host!.stopAndSave(path.join(this.work, 'disks', name));
    this.host = undefined;
    this.bases.add(name);
  }

  private async steps(host: TestHost, release: string): Promise<RemoteStep[]> {
    return remoteCommands((await this.declare(host, release)).declared);
  }

  private async declare(host: TestHost, release: string) {
    const config = sshWriterStack(host, {
      version: release,
      releaseBaseUrl: this.files!.url,
      releaseDir: this.work,
      nodeName: 'cuts-writer',
      dnsName: 'writer.cuts.test',
      // Debian 12 offers no Java 21: the releases that need it get the pinned runtime's stand-in.
      ...(javaMajorFor(release) > DEBIAN_JAVA
        ? { javaRuntime: { url: `${this.files!.url}/${JAVA_STANDIN_ARCHIVE}`, sha256: this.javaSha256 } }
        : {}),
    });
    const declared = await declareProgram(this.recorded, 'testnet', config, {});
    const enode = (await settle(declared.outputs.nodes[NODE].enode)).value as string;
    return { declared, enode };
  }
}

/** The saved disk of a node with `releases` installed one after the other. */
const beforeDisk = (releases: string[]) => `before-${releases.join('-')}`;

/** Where the packages step is among a first install's steps. */
const PACKAGES_AT = REMOTE_STEP_NAMES.indexOf('packages');
/** The newest Java major Debian 12 (the test hosts) offers. */
const DEBIAN_JAVA = 17;
