/**
 * The rules that keep a LACChain node permissioned and safe, as pure functions: a resource (type, name, inputs,
 * options) and what the stack's settings say, in; the violations found, out (empty when the resource complies).
 * The CrossGuard policy pack (policy/index.ts, `pulumi preview --policy-pack policy`) and the offline plan
 * (`npm run plan`) run these same functions. Nothing here imports Pulumi.
 *
 * The program declares only node objects, so every object of a type a rule looks at is a node's: a renamed or
 * unlabelled object is checked too, never skipped. A value unknown until `pulumi up` (an identity generated then)
 * is skipped; everything else a rule needs and cannot read is a violation.
 */
import type { PolicyContext } from './expectations';
import type { PolicyResource } from './inspect';
import { Rule, Violation } from './rules/common';
import { dataVolumeKept, mainnetVolumeSize, nodeKeyKept } from './rules/dataRetention';
import {
  nodePermissioningEnabled,
  p2pHostIsPermissionedIp,
  podPinnedToWorker,
  serviceOnPublicIp,
} from './rules/identityAndNetwork';
import { besuVersionHasPermissioning, genesisDigestPinned } from './rules/releaseAndGenesis';
import { rpcAuthNotInPlainText, rpcOutsideOptIn, rpcSafeOnPublicPorts } from './rules/rpcExposure';
import { keyImagesByTag, keyImagesPinned } from './rules/imagePinning';
import { sshHostKeyOptOut, sshHostKeyPinned } from './rules/sshConnection';
import { keySecretReferenced, validatorKeyCustody } from './rules/keyCustody';
import { companionExecutablesPinned } from './rules/companionPins';

export type { Rule, Violation } from './rules/common';

/** Every rule, in the order they are reported. */
export const RULES: readonly Rule[] = [
  podPinnedToWorker,
  serviceOnPublicIp,
  p2pHostIsPermissionedIp,
  rpcSafeOnPublicPorts,
  rpcOutsideOptIn,
  rpcAuthNotInPlainText,
  nodeKeyKept,
  keySecretReferenced,
  validatorKeyCustody,
  dataVolumeKept,
  mainnetVolumeSize,
  besuVersionHasPermissioning,
  genesisDigestPinned,
  nodePermissioningEnabled,
  sshHostKeyPinned,
  sshHostKeyOptOut,
  keyImagesPinned,
  keyImagesByTag,
  companionExecutablesPinned,
];

/** Runs the rules over resources; returns every violation, in resource then rule order. */
export function checkResources(
  resources: readonly PolicyResource[],
  context: PolicyContext,
  rules: readonly Rule[] = RULES,
): Violation[] {
  const violations: Violation[] = [];
  for (const resource of resources) {
    for (const rule of rules) {
      if (!rule.types.includes(resource.type)) continue;
      for (const message of rule.check(resource, context)) {
        violations.push({
          policy: rule.name,
          type: resource.type,
          name: resource.name,
          message,
          ...(rule.advisory ? { advisory: true } : {}),
        });
      }
    }
  }
  return violations;
}

/** One violation as a line: `[policy] message` (`[policy, advisory]` for a warning). */
export function formatViolation(violation: Violation): string {
  return `[${violation.policy}${violation.advisory ? ', advisory' : ''}] ${violation.message}`;
}

/** The violations that fail a preview or the plan (not the advisory ones). */
export function failingViolations(violations: readonly Violation[]): Violation[] {
  return violations.filter((violation) => !violation.advisory);
}
