/**
 * What the operator still has to give after `npm run init`, each with the exact command that gives it: what the
 * program's loader (as `pulumi up` runs it) finds missing in the stack as written, and, once that is given, what the
 * mandatory policy rules the program enforces on every `pulumi up` (policy/programRules.ts) still require. Nothing is
 * decided here: every item comes from a problem the loader reports or a violation a rule reports.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { configKey, DEFAULT_SSH_PORT } from '../../core/catalog/defaults';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import type { Network } from '../../core/catalog/networks';
import { loadStack, RawStackConfig } from '../../core/settings/load';
import type { StackSettings } from '../../core/settings/model';
import { formatProblem, Problem, SettingsError } from '../../core/settings/problems';
import { readFileFromDisk, readStackConfigFile } from '../../core/settings/settingsFiles';
import { ENCRYPTED_VALUE } from '../../core/settings/sources';
import type { FileReader } from '../../core/settings/sources';
import { programRuleViolations } from '../../policy/programRules';
import { dataImageSetting } from '../../policy/rules/imagePinning';
import { formatViolation } from '../../policy/rules';
import {
  SSH_AUTHENTICATION_KEY,
  SSH_AUTHENTICATIONS,
  SSH_PRIVATE_KEY_KEY,
  sshAuthenticationOf,
  type SshAuthentication,
} from '../../core/catalog/sshLogin';

/** A line of an item: a command to run as printed, or a sentence. */
export type ToDoLine = { command: string } | { text: string };

/** One thing still to do: what it is, then the commands that do it and where the value comes from. */
export interface ToDo {
  what: string;
  lines: ToDoLine[];
}

/** The list as printed: numbered, each command on its own line, indented to be copied. */
export function formatToDo(items: readonly ToDo[]): string {
  return items
    .map((item, i) => {
      const lines = item.lines.map((line) =>
        'command' in line ? `       ${line.command}` : line.text.replace(/^/gm, '     '),
      );
      return [`  ${i + 1}. ${item.what}`, ...lines].join('\n');
    })
    .join('\n');
}

/** The stack file as the engine would hand it over, from its text (the file need not be written yet). */
export function rawStackConfig(text: string, shownAs: string, baseDir: string): RawStackConfig {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-init-'));
  try {
    const file = path.join(folder, shownAs);
    fs.writeFileSync(file, text, { mode: 0o600 });
    return { ...readStackConfigFile(file), file: shownAs, baseDir };
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

/** The problems the loader finds in a stack, as `pulumi up` loads it (none when it would deploy). */
export function stackProblems(stack: string, raw: RawStackConfig, readFile: FileReader = readFileFromDisk): Problem[] {
  try {
    loadStack(stack, raw, readFile);
    return [];
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
}

/** The node the setup wrote, as the still-to-do list names it. */
export interface WrittenNode {
  name: string;
  /** Its SSH host and port (SSH nodes). */
  host?: string;
  port?: number;
  /** The command line that runs the setup again for this node, with `--host-key` last (its value left to fill in). */
  rerun: string;
}

/** What the still-to-do list is made from. */
export interface ToDoInput {
  stack: string;
  network: Network;
  /** The stack file's name as shown (`Pulumi.testnet.yaml`) and the folder it is in. */
  stackFile: string;
  dir: string;
  /** `--config FILE` for `npm run plan` when the stack file is not the project's own. */
  planConfig: string;
  node: WrittenNode;
}

const SSH_KEY = SSH_PRIVATE_KEY_KEY;
const NODES = configKey('nodes');
const COMPANIONS = configKey('companions');
/** A node's missing host key: `lacchain:nodes[1].inventory.host_key`. */
const HOST_KEY_PROBLEM = new RegExp(`^${NODES}\\[(\\d+)\\]\\.inventory\\.host_key$`);
/** A companion's missing digest: `lacchain:companions.rotationValidator.sha256`. */
const COMPANION_DIGEST_PROBLEM = new RegExp(`^${COMPANIONS}\\.([A-Za-z]+)\\.(sha256|imageDigest)$`);
/** What stands in, only while the list is made, for a value the operator will give. */
const STAND_INS = {
  hostKey: 'ssh-ed25519 STANDIN',
  sha256: '0'.repeat(64),
  imageDigest: `sha256:${'0'.repeat(64)}`,
};
/**
 * The pinning rule's message names the container, why it must be pinned (it receives the node key, or touches the
 * node's data) and its image (policy/rules/imagePinning.ts).
 */
const UNPINNED_CONTAINER =
  /container (\S+) (receives the node key|touches the node's data \([^)]*\)) but runs image (\S+) by tag/;
const PINNING = 'docs/kubernetes.md, "Pinning images"';

/** A value the operator gives later, which the loader reports missing: a host key, a companion's digest, the SSH key. */
function givenLater(problem: Problem, stackFile: string): boolean {
  return (
    problem.file === stackFile &&
    problem.given.startsWith('missing') &&
    (problem.key === SSH_KEY || HOST_KEY_PROBLEM.test(problem.key) || COMPANION_DIGEST_PROBLEM.test(problem.key))
  );
}

/** The still-to-do items of the stack file at `dir/stackFile`, in the order to do them. */
export function stillToDo(input: ToDoInput): ToDo[] {
  const { stack, dir, stackFile } = input;
  const raw = { ...readStackConfigFile(path.join(dir, stackFile)), file: stackFile };
  const problems = stackProblems(stack, raw);
  const later = problems.filter((p) => givenLater(p, stackFile));
  const others = problems.filter((p) => !givenLater(p, stackFile));
  const nodes = parsedList(raw.values[NODES]);
  const items: ToDo[] = [];
  for (const problem of later) {
    const hostKey = HOST_KEY_PROBLEM.exec(problem.key);
    const companionDigest = COMPANION_DIGEST_PROBLEM.exec(problem.key);
    if (hostKey && nodes[Number(hostKey[1])]?.name === input.node.name) items.push(hostKeyItem(input));
    else if (companionDigest) items.push(companionDigestItem(stack, problem, companionDigest[1]));
    else if (problem.key !== SSH_KEY) items.push(problemItem(problem));
  }
  items.push(...others.map(problemItem));
  // The policy's requirements show once the settings load: with every value still to give stood in for.
  const settings = others.length === 0 ? settingsWith(stack, raw, later) : undefined;
  if (settings) items.push(...imageItems(stack, settings));
  else items.push(planItem(stack, input.planConfig));
  if (later.some((p) => p.key === SSH_KEY)) {
    items.push({
      what: `${SSH_KEY}: the SSH private key pulumi up logs in to the machines with (one the login user accepts):`,
      lines: [{ command: `pulumi config set --stack ${stack} --secret ${SSH_KEY} < ~/.ssh/id_ed25519` }],
    });
  }
  return items;
}

/**
 * How `pulumi up` will log in to the SSH nodes of the stack file at `dir/stackFile`, when it is with the agent (the
 * default): a line saying the agent needs the key, and where the other way is; empty otherwise (the list then names the
 * stored key when it is missing).
 */
export function agentLoginNote(dir: string, stackFile: string): string {
  const raw = { ...readStackConfigFile(path.join(dir, stackFile)), file: stackFile };
  const sshNodes = parsedList(raw.values[NODES]).some((n) => n.target === 'ssh');
  if (!sshNodes || loginAuthentication(raw) !== 'agent') return '';
  return `login: pulumi up logs in to the machines with your ssh agent (${SSH_AUTHENTICATION_KEY} agent, the default; the private key stays out of the state): load the key the login user accepts into it first (ssh-add ~/.ssh/id_ed25519); a runner without an agent stores it instead (docs/ssh.md#logging-in)\n`;
}

/** How the stack as written logs in to its SSH nodes (the loader's rule: the agent unless a key is stored). */
function loginAuthentication(raw: RawStackConfig): SshAuthentication {
  const named = raw.values[SSH_AUTHENTICATION_KEY];
  return sshAuthenticationOf(
    (SSH_AUTHENTICATIONS as readonly string[]).includes(named ?? '') ? (named as SshAuthentication) : undefined,
    raw.values[SSH_KEY] !== undefined || (raw.encrypted ?? []).includes(SSH_KEY),
  );
}

/** The item of the written node's host key: ssh-keyscan, then the key in the inventory or given to init again. */
function hostKeyItem(input: ToDoInput): ToDo {
  const { host = '<host>', port = DEFAULT_SSH_PORT, name } = input.node;
  const portFlag = port === DEFAULT_SSH_PORT ? '' : ` -p ${port}`;
  return {
    what: `the SSH host key of ${host} (host_key of node ${name}), read on a channel you trust (the machine's console, or your provider's):`,
    lines: [
      { command: `ssh-keyscan${portFlag} -t ed25519 ${host}` },
      {
        text: `then write the key it prints (ssh-ed25519 AAAA…, without the host name) as host_key in the inventory of node ${name} in ${input.stackFile}, or give the line to init:`,
      },
      { command: `${input.node.rerun} '<the line ssh-keyscan printed>'` },
      {
        text: `(or let init read it and check it: --host-key-fingerprint SHA256:… instead of --host-key, the fingerprint ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub prints on the machine's console)`,
      },
      ...(input.network.allowsUnpinnedHostKey
        ? [{ text: '(on a test network only, --accept-any-host-key instead sends the node key to whatever answers)' }]
        : []),
    ],
  };
}

/** The item of a companion's digest: the command that sets it, and the loader's sentence saying where it comes from. */
function companionDigestItem(stack: string, problem: Problem, companion: string): ToDo {
  const value = problem.key.endsWith('.sha256') ? '<sha256>' : 'sha256:<digest>';
  return {
    what: `${problem.key}: ${problem.allowed} (${companion} in core/catalog/companions.ts; docs/companions.md):`,
    lines: [{ command: `pulumi config set --stack ${stack} --path '${problem.key}' ${value}` }],
  };
}

/** A problem of another setting, to fix by hand. */
function problemItem(problem: Problem): ToDo {
  return { what: `fix ${formatProblem(problem)}`, lines: [] };
}

/** The plan to run once the settings load: the policy rules' own list of what is left. */
function planItem(stack: string, planConfig: string): ToDo {
  return {
    what: 'then check the stack with the policy rules (they may name image digests to pin):',
    lines: [{ command: `npm run plan -- --stack ${stack}${planConfig} --out plan` }],
  };
}

/** The list `lacchain:nodes` as the engine hands it over (JSON text). */
function parsedList(text: string | undefined): Array<Record<string, unknown>> {
  try {
    const list = text === undefined ? [] : JSON.parse(text);
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

/** The settings once the values still to give are there (stand-ins only known to this list), or undefined. */
function settingsWith(stack: string, raw: RawStackConfig, later: Problem[]): StackSettings | undefined {
  const values = { ...raw.values };
  const encrypted = [...(raw.encrypted ?? [])];
  const secretKeys = [...(raw.secretKeys ?? [])];
  for (const problem of later) {
    const hostKey = HOST_KEY_PROBLEM.exec(problem.key);
    const companionDigest = COMPANION_DIGEST_PROBLEM.exec(problem.key);
    if (problem.key === SSH_KEY) {
      values[SSH_KEY] = ENCRYPTED_VALUE;
      encrypted.push(SSH_KEY);
      secretKeys.push(SSH_KEY);
    } else if (hostKey) {
      const nodes = parsedList(values[NODES]);
      (nodes[Number(hostKey[1])].inventory as Record<string, unknown>).host_key = STAND_INS.hostKey;
      values[NODES] = JSON.stringify(nodes);
    } else if (companionDigest) {
      const [, companion, field] = companionDigest;
      const companions = JSON.parse(values[COMPANIONS] ?? '{}') as Record<string, Record<string, unknown>>;
      companions[companion] = { ...companions[companion], [field]: STAND_INS[field as 'sha256' | 'imageDigest'] };
      values[COMPANIONS] = JSON.stringify(companions);
    }
  }
  try {
    return loadStack(stack, { ...raw, values, encrypted, secretKeys }, readFileFromDisk).settings;
  } catch (error) {
    if (error instanceof SettingsError) return undefined;
    throw error;
  }
}

/**
 * The image digests the mandatory rules require (on mainnet: every container that receives the node key, or touches
 * its data, pinned), each with the setting that pins it; any other violation as the rule words it.
 */
function imageItems(stack: string, settings: StackSettings): ToDo[] {
  const pins = new Map<string, { setting: string; file?: string }>();
  const valuesFiles = new Map<string, string | undefined>();
  for (const node of settings.nodes) {
    if (node.target !== 'kubernetes') continue;
    valuesFiles.set(node.name, node.valuesFile);
    const names = kubernetesNames(node.name);
    pins.set(names.besuContainer, { setting: 'deploy.imageDigest', file: node.valuesFile });
    for (const companion of node.companions) {
      pins.set(names.companionContainer(companion.name), { setting: `${COMPANIONS}.${companion.key}.imageDigest` });
    }
  }
  /** A data container's pin: its image's setting in the values file of the node whose resource it is in. */
  const dataPin = (resource: string, image: string) => {
    // The longest name first: node writer-2's resources also start with writer-.
    const node = [...valuesFiles.keys()]
      .filter((name) => resource.startsWith(`${name}-`))
      .sort((a, b) => b.length - a.length)[0];
    const setting = dataImageSetting(image);
    return node === undefined || setting === undefined ? undefined : { setting, file: valuesFiles.get(node) };
  };
  const items = new Map<string, ToDo>();
  // The containers that receive the key first: Besu's item names its own container, not an init container's.
  const violations = programRuleViolations(settings).sort(
    (a, b) =>
      Number(!a.message.includes('receives the node key')) - Number(!b.message.includes('receives the node key')),
  );
  for (const violation of violations) {
    const [, container, why, image] = UNPINNED_CONTAINER.exec(violation.message) ?? [];
    const pin =
      container === undefined
        ? undefined
        : why === 'receives the node key'
          ? pins.get(container)
          : dataPin(violation.name, image);
    if (!pin) {
      items.set(violation.message, { what: `policy: ${formatViolation(violation)}`, lines: [] });
      continue;
    }
    const id = `${pin.file ?? ''}:${pin.setting}`;
    if (items.has(id)) continue;
    const read = { command: `docker buildx imagetools inspect ${image}` };
    const field = pin.setting.replace(/^deploy\./, '');
    items.set(id, {
      what: `the registry digest of ${image} (container ${container} ${why}: ${violation.policy}; ${PINNING}), read on a machine you trust:`,
      lines: pin.file
        ? [read, { text: `then in ${pin.file}, under deploy:` }, { command: `  ${field}: sha256:<digest>` }]
        : [read, { command: `pulumi config set --stack ${stack} --path '${pin.setting}' sha256:<digest>` }],
    });
  }
  return [...items.values()];
}
