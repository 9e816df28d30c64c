/**
 * DIR/remote/<node>/ of the offline plan: the ordered scripts an SSH node's provisioning runs, each beside its
 * non-secret parameters, exactly as the RemoteNode component sends them (the node key shown as "[secret]"): each .sh
 * file holds the steps' shared helpers (scripts/remote/lib.sh) then the step's own script, as its input does.
 */
import * as fs from 'fs';
import * as path from 'path';
import { sha256Hex } from '../../core/genesis';
import { exportLines, STEP_END, stepCommand, stepScript } from '../../core/remote/shell';
import {
  BACKUP_PASSWORD_PARAMETER,
  BACKUP_S3_PARAMETERS,
  METRICS_TOKEN_PARAMETER,
  NODE_KEY_PARAMETER,
  remoteSteps,
} from '../../core/remote/steps';
import { S3_REPOSITORY } from '../../core/settings/fields';
import { describeNode } from '../../core/node/description';
import type { SshNodeSettings } from '../../core/settings/model';
import { SECRET_MARKER } from '../../tools/recording/engine';

/** Writes the steps of one SSH node; `enode` and `address` may be markers when only `pulumi up` can know them. */
export function writeRemotePlan(
  out: string,
  node: SshNodeSettings,
  values: { genesis: string; enode: string; address: string; backupPasswordSet?: boolean },
): void {
  const dir = path.join(out, 'remote', node.name);
  fs.mkdirSync(dir, { recursive: true });
  const steps = remoteSteps(describeNode(node), { ...values, genesisSha256: sha256Hex(values.genesis) });
  const index: string[] = [
    `# Provisioning of node ${node.name}: each step runs as \`ssh -p ${node.sshPort} ${node.user}@${node.host} ${stepCommand(node.user)}\``,
    `# with its standard input made as core/remote/shell.ts stepInput makes it: a header line, \`{\`, its .env file,`,
    `# its .sh file (the steps' shared helpers, scripts/remote/lib.sh, then the step's own script), \`}\` and the line`,
    `# \`${STEP_END}\`; the steps run in this order.`,
  ];
  steps.forEach((step, i) => {
    const prefix = `${String(i + 1).padStart(2, '0')}-${step.name}`;
    const env = { ...(step.env as Record<string, string>) };
    if (step.takesNodeKey) {
      // A machine holding its own key gets none, and derives the backup password itself unless the stack sets one.
      if (node.keyCustody === 'stack') env[NODE_KEY_PARAMETER] = SECRET_MARKER;
      if (node.keyCustody === 'stack' || values.backupPasswordSet) env[BACKUP_PASSWORD_PARAMETER] = SECRET_MARKER;
      if (S3_REPOSITORY.test(node.backups.repository)) {
        for (const parameter of Object.values(BACKUP_S3_PARAMETERS)) env[parameter] = SECRET_MARKER;
      }
      if (node.metricsEndpoint) env[METRICS_TOKEN_PARAMETER] = SECRET_MARKER;
    }
    fs.writeFileSync(path.join(dir, `${prefix}.sh`), stepScript(step.scriptFile));
    fs.writeFileSync(path.join(dir, `${prefix}.env`), exportLines(env));
    index.push(`${prefix}.sh`);
  });
  fs.writeFileSync(path.join(dir, 'STEPS.txt'), `${index.join('\n')}\n`);
}
