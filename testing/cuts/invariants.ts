/**
 * The invariants every cut must keep, checked on the machine: right after the cut (what it left) and after the
 * recovery the docs give (re-run, or cancel and refresh first). Each broken invariant is one line saying what was
 * found; an empty list is a cut survived.
 */
import type { TestHost } from '../host/testHost';
import {
  configParses,
  enodeAnswered,
  fileDigests,
  FileDigests,
  KEY_MODES,
  KEY_OWNER,
  keyState,
  leftoverTemporaryFiles,
  nodeHead,
  reachableTcpPorts,
  releaseLink,
  serviceActive,
  versionRefusals,
} from './machineState';

/** What a cut node must keep, as the uncut change leaves it. */
export interface Expected {
  /** The stack's node key (compared on the machine) and the enode it exports. */
  key: string;
  enode: string;
  /** The tracked files before the change (empty for a first install) and after the uncut change. */
  filesBefore: FileDigests;
  filesAfter: FileDigests;
  /** The TCP ports reachable from outside once the uncut change is done. */
  reachableAfter: number[];
  /** The node's head before the change (0 for a first install). */
  headBefore: number;
  /** The release the change installs, as the `current` link names it (besu-<version>). */
  releaseAfter: string;
}

/** What the cut left, before any recovery: no mix of files, no key readable by others, no port opened too wide. */
export async function brokenAtCut(host: TestHost, expected: Expected): Promise<string[]> {
  const broken: string[] = [];
  const files = await fileDigests(host);
  for (const file of new Set([...Object.keys(files), ...Object.keys(expected.filesBefore)])) {
    const now = files[file];
    const allowed = [expected.filesBefore[file], expected.filesAfter[file]];
    if (!allowed.includes(now)) {
      broken.push(`${file}: ${now === undefined ? 'gone' : 'neither its content before nor after the change'}`);
    }
  }
  broken.push(...keyBroken(await keyState(host, expected.key), false));
  broken.push(...(await commonBroken(host, expected)));
  return broken;
}

/** After the recovery: the node converged to what the uncut change leaves, with its identity and its data. */
export async function brokenAfterRecovery(host: TestHost, expected: Expected): Promise<string[]> {
  const broken: string[] = [];
  const files = await fileDigests(host);
  for (const file of new Set([...Object.keys(files), ...Object.keys(expected.filesAfter)])) {
    if (files[file] !== expected.filesAfter[file]) {
      broken.push(`${file}: ${files[file] === undefined ? 'missing' : 'differs from the uncut change'} after recovery`);
    }
  }
  broken.push(...keyBroken(await keyState(host, expected.key), true));
  const link = await releaseLink(host);
  if (link?.target !== expected.releaseAfter)
    broken.push(`release link at ${link?.target ?? 'nothing'} after recovery`);
  if (!(await serviceActive(host))) broken.push('the node is not running after recovery');
  const enode = await enodeAnswered(host, 20);
  if (enode !== expected.enode) broken.push(`the node answers net_enode with ${enode ?? 'nothing'}, not the stack's`);
  const head = await nodeHead(host);
  if (head === undefined || head < expected.headBefore) {
    broken.push(`head ${head ?? 'unknown'} after recovery, below ${expected.headBefore} before the change`);
  }
  for (const line of await versionRefusals(host)) broken.push(`Besu met data newer than its release: ${line}`);
  for (const file of await leftoverTemporaryFiles(host)) broken.push(`a temporary file left after recovery: ${file}`);
  broken.push(...(await commonBroken(host, expected)));
  return broken;
}

/** The key file, when there, holds the stack's key and only its owner can read it; after recovery it must be there. */
function keyBroken(state: Awaited<ReturnType<typeof keyState>>, mustBeThere: boolean): string[] {
  if (!state.present) return mustBeThere ? ['the node key file is missing'] : [];
  const broken: string[] = [];
  if (!state.holdsKey) broken.push("the node key file does not hold the stack's key");
  if (state.owner !== KEY_OWNER || !KEY_MODES.includes(state.mode)) {
    broken.push(`the node key file is ${state.owner} ${state.mode}, not ${KEY_OWNER} ${KEY_MODES.join(' or ')}`);
  }
  return broken;
}

/** Checked at the cut and after recovery alike. */
async function commonBroken(host: TestHost, expected: Expected): Promise<string[]> {
  const broken: string[] = [];
  const unparsable = await configParses(host);
  if (unparsable) broken.push(`config.toml does not parse: ${unparsable}`);
  const link = await releaseLink(host);
  if (link && !link.complete) broken.push(`the release link points at an incomplete release ${link.target}`);
  const wider = (await reachableTcpPorts(host)).filter((port) => !expected.reachableAfter.includes(port));
  if (wider.length > 0) broken.push(`reachable from outside beyond the final state: tcp ${wider.join(', ')}`);
  return broken;
}
