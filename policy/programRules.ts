/**
 * The mandatory rules every `pulumi up` enforces, with or without `--policy-pack`: before the program declares
 * anything, the pack's own rule functions run over what each node's settings render to (the same renderers the
 * components declare: a cluster node's ConfigMap and StatefulSet, an SSH node's node-files step), and a violation
 * ends the run with the pack's message (rule name, resource, the fix). The pack runs the same functions on the
 * resources the engine is given (`--policy-pack policy`) and on the offline plan; nothing here imports Pulumi.
 *
 * Here: the mandatory rules the settings alone can break, though they pass the settings checks (the settings accept
 * the choice on a test network, where the rule is advisory):
 * - `node-key-images-pinned`: a container that receives the node key, from an image by tag (no deploy.imageDigest,
 *   no lacchain:companions.<companion>.imageDigest), or one that touches the node's data (the pod's backup before a
 *   release change, the backup schedule's steps: no deploy.backupImageDigest, no deploy.kubectlImageDigest);
 * - `rpc-safe-on-public-ports`: the operator's opt-in (rpc.allowUnsafeApis, rpc.allowConsensusVotesFromOutside) to
 *   unsafe or consensus-voting methods, or CORS `*`, on an RPC reachable from outside.
 *
 * The other mandatory rules stay in the pack only:
 * - the settings checks refuse, naming the file and the key, every setting that would break them, before any rule
 *   runs: `rpc-auth-not-in-plain-text` (core/settings/rpcSetting.ts), `mainnet-volume-size` (valuesFile.ts),
 *   `besu-version-supports-permissioning` (the release's own check), `ssh-host-key-pinned` (inventory.ts), and
 *   `genesis-digest-pinned` (index.ts refuses a genesis that is not the pinned one);
 * - they compare declared resources with the settings, which the program renders them from, so they catch what
 *   only a declared resource shows (a program change, a transformation, a hand edit): `pod-pinned-to-worker`,
 *   `service-static-public-ip`, `p2p-host-is-permissioned-ip`, `node-permissioning-enabled`, `data-volume-kept`,
 *   `key-secret-referenced` (the settings refuse a missing keySecret or publicKey, or a mistyped name);
 * - `node-key-secret-kept`: only lacchain:allowKeyDeletion breaks it, the operator's deliberate step before a
 *   planned `pulumi destroy`, which needs the program to declare the Secret so (the pack's rule is lowered for that
 *   run, docs/reviewing.md).
 */
import { backupCronJobManifest } from '../core/kubernetes/backups';
import { configMapManifest, podConfig, statefulSetManifest } from '../core/kubernetes/manifests';
import { kubernetesNodeFiles } from '../core/kubernetes/nodeFiles';
import { describeNode } from '../core/node/description';
import { exportLines } from '../core/remote/shell';
import { remoteSteps } from '../core/remote/steps';
import type { StackSettings } from '../core/settings/model';
import { contextFromSettings } from './expectations';
import { BACKUP_TYPES, PolicyResource, TYPES, UNKNOWN_MARKER } from './inspect';
import { checkResources, failingViolations, formatViolation, Rule, Violation } from './rules';
import { keyImagesPinned } from './rules/imagePinning';
import { rpcSafeOnPublicPorts } from './rules/rpcExposure';

/** The mandatory rules the program enforces before declaring anything (see above for the others). */
export const PROGRAM_RULES: readonly Rule[] = [keyImagesPinned, rpcSafeOnPublicPorts];

/** A resource as the rules see it: named as the components name it, nothing protected or parented but as declared. */
function planned(type: string, name: string, inputs: unknown, parent?: string): PolicyResource {
  return { type, name, inputs: inputs as Record<string, unknown>, options: { protect: false, parent } };
}

/**
 * What the program rules look at, rendered from the settings as the components render it: per cluster node its
 * ConfigMap (`<node>-config`), StatefulSet (`<node>-node`) and, with `lacchain:backups.schedule`, the schedule's
 * CronJob (`<node>-backup-schedule`); per SSH node its node-files step (`<node>-node-files`, under the node's
 * component). What only `pulumi up` knows (the identity, the genesis, the config checksum) is left
 * unknown, which the rules skip.
 */
export function renderedResources(settings: StackSettings): PolicyResource[] {
  const resources: PolicyResource[] = [];
  for (const node of settings.nodes) {
    if (node.target === 'kubernetes') {
      const description = describeNode(node);
      const files = kubernetesNodeFiles(description, UNKNOWN_MARKER);
      // The genesis `pulumi up` declares is verified against the pinned digest: the names are those it makes.
      const config = podConfig(node, files, node.network.genesis.sha256);
      resources.push(
        planned(TYPES.configMap, `${node.name}-config`, configMapManifest(node, files, config)),
        planned(TYPES.statefulSet, `${node.name}-node`, statefulSetManifest(description, UNKNOWN_MARKER, config)),
      );
      if (node.backups.schedule !== 'off') {
        resources.push(planned(BACKUP_TYPES.cronJob, `${node.name}-backup-schedule`, backupCronJobManifest(node)));
      }
      continue;
    }
    const unknown = { genesis: UNKNOWN_MARKER, genesisSha256: UNKNOWN_MARKER, enode: UNKNOWN_MARKER };
    const steps = remoteSteps(describeNode(node), { ...unknown, address: UNKNOWN_MARKER });
    for (const step of steps.filter((s) => s.name === 'node-files')) {
      const stdin = exportLines(step.env as Record<string, string>);
      resources.push(planned(TYPES.command, `${node.name}-${step.name}`, { stdin }, node.name));
    }
  }
  return resources;
}

/** The violations of the program rules that fail a run (none on a stack that complies), as the pack reports them. */
export function programRuleViolations(settings: StackSettings): Violation[] {
  const violations = checkResources(renderedResources(settings), contextFromSettings(settings), PROGRAM_RULES);
  return failingViolations(violations);
}

/** A stack that breaks a mandatory rule. Its message lists each violation as the pack prints it; nothing was declared. */
export class PolicyViolationError extends Error {
  constructor(readonly violations: readonly Violation[]) {
    super(violations.map(formatViolation).join('\n'));
    this.name = 'PolicyViolationError';
  }
}

/** Throws PolicyViolationError when the settings break a mandatory rule the program enforces. */
export function enforceProgramRules(settings: StackSettings): void {
  const violations = programRuleViolations(settings);
  if (violations.length > 0) throw new PolicyViolationError(violations);
}
