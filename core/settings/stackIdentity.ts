/**
 * Which stack this is and the network it deploys to: the stack names that exist, and the network a stack file names.
 */
import {
  findNetwork,
  Network,
  NETWORK_NAMES,
  NETWORKS,
  STACK_NAMES,
  STACK_NETWORKS,
  StackName,
} from '../catalog/networks';
import { suggestion } from '../didYouMean';
import { describeGiven, Problem, SettingsError } from './problems';

const ALLOWED_STACKS = `${STACK_NAMES.map((s) => `${s} (${STACK_NETWORKS[s]})`).join(' or ')}`;

/** Validates a stack name (a mistyped one gets the closest); the deprecated network's name gets its deprecation message. */
export function checkStackName(stack: string, where = 'pulumi stack'): StackName {
  if ((STACK_NAMES as string[]).includes(stack)) return stack as StackName;
  const network = findNetwork(stack);
  const allowed = network?.deprecated ? `${ALLOWED_STACKS} — ${network.deprecated}` : ALLOWED_STACKS;
  const given = `${describeGiven(stack)}${suggestion(stack, STACK_NAMES)}`;
  throw new SettingsError([{ file: where, key: 'stack', given, allowed }]);
}

/** Checks the network a stack file names (`lacchain:network`) against the stack's own. */
export function checkStackNetwork(
  given: string,
  stack: StackName,
  network: Network,
  file: string,
  key: string,
  problems: Problem[],
): void {
  const named = findNetwork(given);
  if (named?.deprecated) {
    problems.push({ file, key, given: describeGiven(given), allowed: `${network.name} — ${named.deprecated}` });
  } else if (!named) {
    problems.push({
      file,
      key,
      given: describeGiven(given),
      allowed: `${network.name} for stack ${stack} (networks: ${NETWORK_NAMES.filter((n) => !NETWORKS[n].deprecated).join(', ')})`,
    });
  } else if (named.name !== network.name) {
    problems.push({
      file,
      key,
      given: describeGiven(given),
      allowed: `${network.name}: stack ${stack} deploys to ${network.name}; ${named.name} belongs to another stack`,
    });
  }
}
