/** The body of `npm run plan` (cli/plan.ts holds its options and help): the offline plan. */
import * as fs from 'fs';
import { PROJECT_DIR } from '../../core/projectDir';
import { configKey, stackConfigFileName } from '../../core/catalog/defaults';
import * as path from 'path';
import { describeRollout, ROLLOUT_HEADING } from '../../core/node/rollout';
import * as yaml from 'js-yaml';
import * as pulumi from '@pulumi/pulumi';
import { unknown } from '@pulumi/pulumi/output';
import { loadOperatorStack } from '../operatorStack';
import { ENCRYPTED_VALUE } from '../../core/settings/sources';
import { loadGenesis } from '../../core/genesis';
import type { StackSettings } from '../../core/settings/model';
import { declareStack, StackOutputs } from '../../program';
import { CommandLine, EXIT, ToolFailure, UsageError } from '../cli';
import type { PLAN_OPTIONS } from './spec';
import { readKeyFile } from '../keyFile';
import { RecordedResource, settle, startRecording } from '../../tools/recording/engine';
import { SECRET_MARKER, UNKNOWN_MARKER } from '../../core/planFormat';
import { plannedInputs, plannedResource } from './plannedResource';
import { PROGRAM_RESOURCE_TYPES, PROJECT_NAME } from '../../tools/recording/programTypes';
import { writeRemotePlan } from './remotePlan';
import { decryptNodeKeys } from './encryptedNodeKeys';
import { addRemoteReruns, readRemoteSteps, RemoteSteps } from './remoteReruns';
import { diffPlans, formatDiff, isEmptyDiff, PlannedResource, readPlannedResources } from './diff';
import { BasePlanError, planAtRef } from './planAtRef';
import { SSH_PRIVATE_KEY_KEY, sshLoginLine } from '../../core/catalog/sshLogin';
import { checkPlan, plannedStepInputs, PlannedNodeValues } from '../../policy/offline';
import { planGenesisPlaceholder } from '../../policy/inspect';
import { failingViolations, formatViolation } from '../../policy/rules';

/** Makes the offline plan of a stack. */
export async function run({ values }: CommandLine<typeof PLAN_OPTIONS>): Promise<number> {
  if (!values.stack) throw new UsageError('--stack is required (npm run plan -- --help shows the usage)');
  if (!values.out) throw new UsageError('--out is required: the folder to write the plan into');
  if (values.diff && values['diff-ref']) throw new UsageError('--diff and --diff-ref: give one');
  // No credential is needed to plan: an SSH private key not set yet is shown as a value only pulumi up knows.
  const { stack, settings, secrets } = loadOperatorStack(values.stack, values.config);
  const sshNodes = settings.nodes.some((n) => n.target === 'ssh');
  const sshKeyMissing = sshNodes && settings.sshAuthentication === 'privateKey' && secrets.sshPrivateKey === undefined;
  const sshKey = sshKeyMissing ? ENCRYPTED_VALUE : secrets.sshPrivateKey;
  const fromFiles = keyFilesByNode(values['node-key-file'] ?? [], settings);
  // A node key encrypted in the stack file is read with the stack's passphrase, as pulumi up reads it.
  const encrypted = Object.keys(secrets.nodeKeys).filter(
    (node) => secrets.nodeKeys[node] === ENCRYPTED_VALUE && fromFiles[node] === undefined,
  );
  const stackFile = values.config ?? stackConfigFileName(stack);
  const decrypted = decryptNodeKeys(
    stackFile,
    encrypted,
    settings.nodes.map((n) => n.name),
  );
  const nodeKeys = { ...secrets.nodeKeys, ...decrypted.keys, ...fromFiles };
  // The base is read before anything is written (it may be the output folder itself).
  const base = baseResources(values, stack);

  const resources = startRecording({
    project: PROJECT_NAME,
    stack,
    preview: true,
    knownTypes: PROGRAM_RESOURCE_TYPES,
  });
  const genesisFile = settings.genesisFile ?? (values['genesis-file'] && path.resolve(values['genesis-file']));
  const genesis = genesisFile
    ? await loadGenesis(settings.network.genesis, { file: genesisFile })
    : genesisPlaceholder(settings);
  const outputs = declareStack(
    settings,
    {
      sshPrivateKey: sshKey === undefined ? undefined : pulumi.secret(readable(sshKey)),
      nodeKeys: Object.fromEntries(Object.entries(nodeKeys).map(([node, key]) => [node, pulumi.secret(readable(key))])),
      rpcPasswords: Object.fromEntries(
        Object.entries(secrets.rpcPasswords ?? {}).map(([user, password]) => [user, pulumi.secret(readable(password))]),
      ),
      ...(secrets.backupPassword !== undefined
        ? { backupPassword: pulumi.secret(readable(secrets.backupPassword)) }
        : {}),
    },
    { genesis: () => genesis },
  );
  const shownOutputs = await settleOutputs(outputs);
  await pulumi.runtime.disconnect();

  const out = path.resolve(values.out);
  fs.mkdirSync(out, { recursive: true });
  const planned = resources.map(plannedResource);
  fs.writeFileSync(path.join(out, 'resources.json'), `${JSON.stringify(planned, null, 2)}\n`);
  writeKubernetesManifests(out, settings, resources);
  const nodeValues: Record<string, PlannedNodeValues> = {};
  for (const node of settings.nodes) {
    if (node.target !== 'ssh') continue;
    const shown = (shownOutputs as { nodes: Record<string, { enode: string; address: string }> }).nodes[node.name];
    nodeValues[node.name] = { genesis, enode: shown.enode, address: shown.address };
    writeRemotePlan(out, node, { ...nodeValues[node.name], backupPasswordSet: secrets.backupPassword !== undefined });
  }
  const policy = checkPlan(planned, settings, plannedStepInputs(settings, nodeValues));
  fs.writeFileSync(path.join(out, 'policy.json'), `${JSON.stringify(policy, null, 2)}\n`);
  // How a change that restarts several nodes rolls out (docs/upgrades.md#rolling-out-a-change): plan/rollout.txt.
  const rollout = describeRollout(settings.nodes, settings.rollout);
  const rolloutText =
    rollout.length > 0 ? `${ROLLOUT_HEADING}\n${rollout.map((line) => `  ${line}`).join('\n')}\n` : '';
  if (rolloutText) fs.writeFileSync(path.join(out, 'rollout.txt'), rolloutText);
  if (base) {
    const diff = diffPlans(base.resources, planned);
    addRemoteReruns(diff, planned, { base: base.steps, next: readRemoteSteps(out) });
    // A change of a stack of several nodes rolls out one node at a time: the order and each node's wait, with it.
    const text = `${formatDiff(diff, base.label)}${isEmptyDiff(diff) ? '' : rolloutText}`;
    fs.writeFileSync(path.join(out, 'diff.json'), `${JSON.stringify({ base: base.label, ...diff }, null, 2)}\n`);
    fs.writeFileSync(path.join(out, 'diff.txt'), text);
    process.stderr.write(text);
  }
  process.stdout.write(`${JSON.stringify(shownOutputs, null, 2)}\n`);
  const clusterNodes = settings.nodes.filter((node) => node.target === 'kubernetes').map((node) => node.name);
  if (clusterNodes.length > 0 && settings.kubeContext !== undefined) {
    process.stderr.write(
      `note: ${clusterNodes.join(', ')} deploy${clusterNodes.length === 1 ? 's' : ''} to kubectl context ${settings.kubeContext} (${configKey('kubeContext')})\n`,
    );
  }
  if (decrypted.note) process.stderr.write(`${decrypted.note}\n`);
  // How pulumi up logs in to the machines, and so whether the SSH key is in the state (docs/ssh.md).
  if (sshNodes) process.stderr.write(`note: ${sshLoginLine(settings.sshAuthentication)}\n`);
  if (sshKeyMissing) {
    const key = SSH_PRIVATE_KEY_KEY;
    process.stderr.write(
      `note: ${key} is not set: planned as known after pulumi up, which needs it (pulumi config set --secret ${key} < ~/.ssh/id_ed25519)\n`,
    );
  }
  for (const violation of policy.violations) {
    const kind = violation.advisory ? 'policy warning' : 'policy violation';
    process.stderr.write(`${kind}: ${formatViolation(violation)}\n`);
  }
  return failingViolations(policy.violations).length > 0 ? EXIT.failed : EXIT.ok;
}

/** The resources of the plan to compare with: a plan's folder (--diff) or the same stack at a git ref (--diff-ref). */
function baseResources(
  values: {
    stack?: string;
    config?: string;
    'node-key-file'?: string[];
    'genesis-file'?: string;
    diff?: string;
    'diff-ref'?: string;
  },
  stack: string,
): { label: string; resources: PlannedResource[]; steps: RemoteSteps } | undefined {
  if (values.diff) {
    const resources = readPlannedResources(path.resolve(values.diff));
    if (!resources) {
      throw new UsageError(
        `--diff ${values.diff}: no resources.json there (make it with npm run plan -- --out ${values.diff})`,
      );
    }
    return { label: values.diff, resources, steps: readRemoteSteps(path.resolve(values.diff)) };
  }
  const ref = values['diff-ref'];
  if (!ref) return undefined;
  try {
    const { resources, steps } = planAtRef(PROJECT_DIR, ref, {
      stack,
      config: values.config,
      nodeKeyFiles: values['node-key-file'],
      genesisFile: values['genesis-file'],
    });
    return { label: `git ref ${ref}`, resources, steps };
  } catch (error) {
    if (error instanceof BasePlanError) throw new ToolFailure(error.message);
    throw error;
  }
}

/** A secret the plan cannot read (encrypted in the stack config) becomes a value known only to `pulumi up`. */
function readable(value: string): pulumi.Input<string> {
  return value === ENCRYPTED_VALUE ? pulumi.output(unknown as unknown as string) : value;
}

/** `--node-key-file FILE` (a one-node stack) or `--node-key-file NODE=FILE`, read and validated. */
function keyFilesByNode(args: string[], settings: StackSettings): Record<string, string> {
  const names = settings.nodes.map((n) => n.name);
  const keys: Record<string, string> = {};
  for (const arg of args) {
    const match = /^([a-z][-a-z0-9]*)=(.+)$/.exec(arg);
    const [node, file] = match && names.includes(match[1]) ? [match[1], match[2]] : [undefined, arg];
    if (node === undefined && names.length !== 1) {
      throw new UsageError(`--node-key-file ${arg}: this stack has several nodes (${names.join(', ')}): use NODE=FILE`);
    }
    const name = node ?? names[0];
    const custody = settings.nodes.find((n) => n.name === name)?.keyCustody;
    if (custody !== 'stack') {
      throw new UsageError(
        `--node-key-file ${arg}: node ${name} has keyCustody ${custody}: its key is not the stack's (docs/security.md#key-custody)`,
      );
    }
    keys[name] = readKeyFile(file);
  }
  return keys;
}

/** Stands for the genesis in the plan when no local copy is given: its pinned identity. */
function genesisPlaceholder(settings: StackSettings): string {
  return planGenesisPlaceholder(settings.network);
}

/** The stack outputs with every value settled; values only `pulumi up` can know are shown as a marker. */
async function settleOutputs(outputs: StackOutputs): Promise<unknown> {
  const nodes: Record<string, Record<string, unknown>> = {};
  for (const [name, node] of Object.entries(outputs.nodes)) {
    const shown: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (pulumi.Output.isInstance(value)) {
        const settled = await settle(value as pulumi.Output<unknown>);
        shown[key] = settled.secret ? SECRET_MARKER : settled.known ? settled.value : UNKNOWN_MARKER;
      } else if (value !== undefined) {
        shown[key] = value;
      }
    }
    nodes[name] = shown;
  }
  return { network: outputs.network, nodes };
}

/** DIR/kubernetes/<node>.yaml: the namespace and the node's objects, as `kubectl apply` would take them. */
function writeKubernetesManifests(out: string, settings: StackSettings, resources: RecordedResource[]): void {
  const manifests = resources
    .filter((r) => r.type.startsWith('kubernetes:') && !r.type.startsWith('pulumi:providers'))
    .map((r) => plannedInputs(r) as { kind?: string; metadata?: { name?: string; labels?: Record<string, string> } });
  for (const node of settings.nodes) {
    if (node.target !== 'kubernetes') continue;
    const own = manifests.filter(
      (m) =>
        (m.kind === 'Namespace' && m.metadata?.name === node.namespace) ||
        m.metadata?.labels?.['app.kubernetes.io/instance'] === node.name,
    );
    const dir = path.join(out, 'kubernetes');
    fs.mkdirSync(dir, { recursive: true });
    const text = own.map((m) => yaml.dump(m, { lineWidth: -1, noRefs: true, sortKeys: false })).join('---\n');
    fs.writeFileSync(path.join(dir, `${node.name}.yaml`), text);
  }
}
