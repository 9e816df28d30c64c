/**
 * The policy rules on the offline plan (`npm run plan`): the same pure rules CrossGuard runs, over the resources the
 * plan recorded, so a violation shows up in a pull request even where no `pulumi preview` can run.
 */
import { sha256Hex } from '../core/genesis';
import { exportLines } from '../core/remote/shell';
import { describeNode } from '../core/node/description';
import { remoteSteps } from '../core/remote/steps';
import type { StackSettings } from '../core/settings/model';
import type { PlannedResource } from '../core/planFormat';
import { contextFromSettings } from './expectations';
import { PolicyResource, TYPES, UNKNOWN_MARKER } from './inspect';
import { checkResources, RULES, Violation } from './rules';

/** DIR/policy.json: the policy pack, its rules and what they found. */
export interface PlanPolicyReport {
  policyPack: string;
  policies: string[];
  violations: Violation[];
}

/** The policy pack's name (policy/index.ts). */
export const POLICY_PACK_NAME = 'lacchain-node';

/** What the plan knows of an SSH node's late values: the genesis it shows, and the identity (or its marker). */
export interface PlannedNodeValues {
  genesis: string;
  enode: string;
  address: string;
}

/**
 * The parameters of each remote step of a stack's SSH nodes, by resource name, as the plan writes them to
 * DIR/remote/<node>/NN-<step>.env. A step whose recorded input is unknown until `pulumi up` (it embeds an identity
 * generated then) is checked on these instead, so its config.toml and genesis are still checked.
 */
export function plannedStepInputs(
  settings: StackSettings,
  values: Record<string, PlannedNodeValues>,
): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const node of settings.nodes) {
    if (node.target !== 'ssh' || !values[node.name]) continue;
    const { genesis, enode, address } = values[node.name];
    for (const step of remoteSteps(describeNode(node), {
      genesis,
      genesisSha256: sha256Hex(genesis),
      enode,
      address,
    })) {
      inputs[`${node.name}-${step.name}`] = exportLines(step.env as Record<string, string>);
    }
  }
  return inputs;
}

/** The plan's resources as the rules see them. */
export function policyResources(
  planned: readonly PlannedResource[],
  stepInputs: Record<string, string> = {},
): PolicyResource[] {
  return planned.map((resource) => {
    const inputs = { ...(resource.inputs as Record<string, unknown>) };
    if (resource.type === TYPES.command && inputs.stdin === UNKNOWN_MARKER && stepInputs[resource.name]) {
      inputs.stdin = stepInputs[resource.name];
    }
    return {
      type: resource.type,
      name: resource.name,
      inputs,
      options: {
        protect: resource.options.protect ?? false,
        retainOnDelete: resource.options.retainOnDelete,
        parent: resource.options.parent,
      },
    };
  });
}

/** Runs every rule over an offline plan of validated settings. */
export function checkPlan(
  planned: readonly PlannedResource[],
  settings: StackSettings,
  stepInputs: Record<string, string> = {},
): PlanPolicyReport {
  return {
    policyPack: POLICY_PACK_NAME,
    policies: RULES.map((rule) => rule.name),
    violations: checkResources(policyResources(planned, stepInputs), contextFromSettings(settings)),
  };
}
