/** What a move's command line hands the move (`npm run node -- move`, between a machine and a cluster). */
import type { StackName } from '../../core/catalog/networks';
import type { NodeSettings, StackSettings } from '../../core/settings/model';
import type { CommandLine } from '../cli';
import type { NODE_OPTIONS } from './spec';

/** The stack, its settings, the node as the stack file says it is now, the command's flags and the node's RPC URL. */
export interface MoveCommandInput {
  stack: StackName;
  settings: StackSettings;
  node: NodeSettings;
  values: CommandLine<typeof NODE_OPTIONS>['values'];
  rpcUrl: string | undefined;
}
