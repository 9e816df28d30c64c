/**
 * A stack file's text read as `pulumi up` would read it, before anything of a move changes: every check of the
 * settings runs first (the move's own command lines use it for the place the node goes to, or comes from).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { StackName } from '../../core/catalog/networks';
import type { StackSettings } from '../../core/settings/model';
import { loadOperatorStack } from '../operatorStack';

/** The settings of stack `stack` if its file `configFile` held `text` (read from a hidden file beside it, then removed). */
export function stackAsIfMoved(stack: StackName, configFile: string, text: string): StackSettings {
  const checked = path.join(path.dirname(configFile), `.${path.basename(configFile)}.move-check`);
  fs.writeFileSync(checked, text);
  try {
    return loadOperatorStack(stack, checked).settings;
  } finally {
    fs.rmSync(checked, { force: true });
  }
}
