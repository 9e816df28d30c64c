/**
 * The CrossGuard policy pack of this project: `pulumi preview --policy-pack policy` (or `pulumi up`) runs every rule
 * of policy/rules.ts on every resource the program declares, as a mandatory policy: a violation fails the preview.
 * The expected values (public IP, p2p host, worker) come from the stack's own settings in this repository, read as
 * the program reads them. See docs/reviewing.md.
 */
import * as path from 'path';
import { PolicyPack } from '@pulumi/policy';
import { loadPolicyContext, PolicyContext } from './expectations';
import { resourcePolicies } from './crossguard';
import { POLICY_PACK_NAME } from './offline';
import { RULES } from './rules';

/**
 * The folder of the stack files the expected values come from: the project folder (the pack lives in its `policy/`
 * folder), or the one LACCHAIN_POLICY_STACK_DIR names (the tests serve the pack a copy of the example stack).
 */
const PROJECT_DIR = process.env.LACCHAIN_POLICY_STACK_DIR || path.resolve(__dirname, '..');

const contexts = new Map<string, PolicyContext>();
function contextOf(stack: string): PolicyContext {
  if (!contexts.has(stack)) contexts.set(stack, loadPolicyContext(PROJECT_DIR, stack));
  return contexts.get(stack) as PolicyContext;
}

new PolicyPack(POLICY_PACK_NAME, {
  description: 'What keeps a LACChain Besu node permissioned and safe.',
  enforcementLevel: 'mandatory',
  policies: resourcePolicies(RULES, contextOf),
});
