/**
 * The stack an operator's tool works on (plan, node, monitoring): its name checked (`--stack`), its stack file read
 * (`--config`, default `Pulumi.<stack>.yaml`) and loaded as `pulumi up` loads it, except that the stack's SSH private
 * key may be missing: these tools never log in with it (`plan` shows it as a value only `pulumi up` knows).
 */
import { stackConfigFileName } from '../core/catalog/defaults';
import type { StackName } from '../core/catalog/networks';
import { checkStackName, loadStack, type LoadedStack } from '../core/settings/load';
import { readFileFromDisk, readStackConfigFile } from '../core/settings/settingsFiles';

/** The stack named by `--stack` (given) and its settings, from `--config` or the stack's own file. */
export function loadOperatorStack(
  stackFlag: string,
  configFlag: string | undefined,
): LoadedStack & { stack: StackName } {
  const stack = checkStackName(stackFlag, '--stack');
  const loaded = loadStack(stack, readStackConfigFile(configFlag ?? stackConfigFileName(stack)), readFileFromDisk, {
    sshKeyOptional: true,
  });
  return { ...loaded, stack };
}
