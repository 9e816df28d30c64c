/**
 * The exact client commands of the day-2 operations, as argument lists: `kubectl` for a Kubernetes node (the seed's
 * commands, with the names the program created), `ssh` plus a remote shell command for an SSH node.
 */
import { kubernetesNames, IDENTITY_ANNOTATIONS } from '../catalog/kubernetes';
import { PORTS } from '../catalog/ports';
import { companionServiceName } from '../remote/companionService';
import { nodePaths } from '../remote/paths';
import { shellQuote } from '../remote/shell';
import type { KubernetesNodeSettings, SshNodeSettings } from '../settings/model';
import { rpcRequest } from './rpc';

/** How long `start` waits for a recreated pod to be ready. */
export const POD_READY_TIMEOUT = '300s';
/** Lines of the info log shown by `logs` and read by `check`. */
export const LOG_LINES = 100;

/** kubectl argument lists for a Kubernetes node. */
export function kubectlCommands(node: KubernetesNodeSettings, context?: string) {
  const names = kubernetesNames(node.name);
  const ns = ['-n', node.namespace];
  const withContext = (args: string[]) => (context ? ['--context', context, ...args] : args);
  const annotation = IDENTITY_ANNOTATIONS.enode.replace(/\./g, '\\.');
  return {
    /** The seed's: stream the Besu container's log. */
    logs: withContext(['logs', names.pod, '-c', names.besuContainer, '-f', ...ns]),
    /** The recent log, for the check. */
    recentLog: withContext(['logs', names.pod, '-c', names.besuContainer, `--tail=${LOG_LINES * 2}`, ...ns]),
    /** Start and restart: delete the pod, the StatefulSet recreates it. */
    deletePod: withContext(['delete', 'pod', names.pod, ...ns]),
    waitReady: withContext([
      'wait',
      '--for=condition=Ready',
      `pod/${names.pod}`,
      ...ns,
      `--timeout=${POD_READY_TIMEOUT}`,
    ]),
    podPhase: withContext(['get', 'pod', names.pod, ...ns, '-o', 'jsonpath={.status.phase}']),
    /** The Besu container's image: the release in use, when the node does not tell its version. */
    besuImage: withContext([
      'get',
      'pod',
      names.pod,
      ...ns,
      '-o',
      `jsonpath={.spec.containers[?(@.name=="${names.besuContainer}")].image}`,
    ]),
    /** Each container of the pod as `<name>=<ready>` lines: the companions' state. */
    containerReadiness: withContext([
      'get',
      'pod',
      names.pod,
      ...ns,
      '-o',
      'jsonpath={range .status.containerStatuses[*]}{.name}={.ready}{"\\n"}{end}',
    ]),
    recordedEnode: withContext([
      'get',
      'service',
      names.service,
      ...ns,
      '-o',
      `jsonpath={.metadata.annotations.${annotation}}`,
    ]),
  };
}

/** The ssh destination and the remote shell commands for an SSH node. */
export function sshCommands(node: SshNodeSettings) {
  const paths = nodePaths(node);
  const sudo = node.user === 'root' ? '' : 'sudo -n ';
  const service = shellQuote(node.serviceName);
  return {
    destination: ['-p', String(node.sshPort), `${node.user}@${node.host}`],
    serviceState: `systemctl is-active ${service}`,
    /** The state of each companion service, one line each, in the order of `node.companions`. */
    companionStates: node.companions
      .map((c) => `systemctl is-active ${shellQuote(companionServiceName(node, c.name))}`)
      .join('; '),
    start: `${sudo}systemctl start ${service}`,
    restart: `${sudo}systemctl restart ${service}`,
    logs: `${sudo}tail -n ${LOG_LINES} ${shellQuote(paths.infoLog)}`,
    followLogs: `${sudo}tail -n ${LOG_LINES} -F ${shellQuote(paths.infoLog)}`,
    recentLog: `${sudo}tail -n ${LOG_LINES * 2} ${shellQuote(paths.infoLog)}`,
    recordedEnode: `${sudo}cat ${shellQuote(paths.enode)}`,
    /** The release folder `releases/current` points at: the release in use. */
    releaseInUse: `readlink ${shellQuote(`${paths.releasesDir}/current`)}`,
    clock: 'date +%s',
    /** Where the RPC is asked on the machine, for messages. */
    rpcAddress: `http://127.0.0.1:${PORTS.rpcHttp}/ on ${node.host}`,
    rpc: (method: string) =>
      `curl -s --max-time 5 -H 'Host: localhost' -H 'Content-Type: application/json' --data ${shellQuote(rpcRequest(method))} http://127.0.0.1:${PORTS.rpcHttp}/`,
  };
}
