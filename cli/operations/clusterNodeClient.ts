/**
 * A Kubernetes node seen from the operator's machine: `npm run node`'s questions asked through kubectl (the pod, its
 * containers, its worker) and the node's RPC URL.
 */
import { statefulSetRolloutState } from '../../core/operations/rolloutState';
import { promises as dns } from 'dns';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { kubernetesNames, POD_STOP_GRACE_SECONDS } from '../../core/catalog/kubernetes';
import { RPC_ANSWER_SECONDS } from '../../core/catalog/rpc';
import { kubectlCommands, POD_WAIT_CLIENT_MS } from '../../core/operations/clients';
import { withoutControlSequences } from '../../core/operations/terminalText';
import { hexQuantity, rpcRequest, rpcResult } from '../../core/operations/rpc';
import { parseDiskUsage } from '../../core/operations/disk';
import { deployedRelease } from '../../core/operations/fleet';
import { clusterProblem, kubectlTrouble, lastMeaningfulLine, podNotRunning } from '../../core/operations/reach';
import { kubernetesRpcUrl } from '../../core/kubernetes/manifests';
import { ANSWER_LIMITS } from '../../core/catalog/answers';
import { ingressVerdict, ServiceIngress } from '../../core/kubernetes/loadBalancer';
import { LOAD_BALANCER_FACTS } from '../../core/catalog/loadBalancers';
import { fetchWithin, type WholeAnswer } from '../../core/fetchWithin';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import { clusterBackups } from './clusterBackups';
import { clockOffset } from './nodeClock';
import type { ClientContext, NodeClient } from './nodeClientTypes';
import { NodeUnreachable, REACH_TIMEOUT_MS, whenClientMissing } from './nodeUnreachable';
import { attachClient, runClient } from './process';

/** How long `start` waits for the StatefulSet to make the node's new pod. */
const POD_APPEARS_MS = 60_000;
/**
 * How long deleting the node's pod may take: kubectl waits until it is gone, which is its containers' grace period when
 * one of them does not stop on SIGTERM sooner, and the API server's and the worker's own time besides.
 */
const POD_DELETED_MS = (POD_STOP_GRACE_SECONDS + 30) * 1000;

/** The kubeconfig kubectl reads (`$KUBECONFIG`, a list of files, or ~/.kube/config), and whether it is there. */
function kubeconfigFile(): { kubeconfig: string; kubeconfigFound: boolean } {
  const given = process.env.KUBECONFIG;
  const files = given ? given.split(path.delimiter).filter(Boolean) : [path.join(os.homedir(), '.kube', 'config')];
  return { kubeconfig: given || '~/.kube/config', kubeconfigFound: files.some((file) => fs.existsSync(file)) };
}

/** kubectl's current context (`kubectl config current-context`), or undefined when it has none. */
async function currentKubeContext(): Promise<string | undefined> {
  const result = await runClient('kubectl', ['config', 'current-context'], undefined, REACH_TIMEOUT_MS);
  return result.code === 0 ? result.stdout.trim() || undefined : undefined;
}

/** The client of a Kubernetes node: its pod and StatefulSet through kubectl, its RPC at `context.rpcUrl` or its Service's URL. */
export function clusterNodeClient(
  node: KubernetesNodeSettings,
  context: ClientContext,
  restartHint: string,
): NodeClient {
  const { kubeContext, rpcUrl } = context;
  const commands = kubectlCommands(node, kubeContext);
  const names = kubernetesNames(node.name);
  const url = rpcUrl ?? kubernetesRpcUrl(node);
  const failure = (what: string, result: { code: number; stderr: string }) =>
    new ToolFailure(
      `node ${node.name}: kubectl cannot ${what}: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`,
    );
  const kubectl = async (args: string[], what: string, timeoutMs?: number) => {
    const result = await runClient('kubectl', args, undefined, timeoutMs);
    if (result.code !== 0) throw failure(what, result);
    return result.stdout;
  };
  /** The IP addresses the cloud gave the node's Service (`status.loadBalancer.ingress`); none when unread. */
  const serviceIngressIps = async (): Promise<string[]> => {
    const result = await runClient('kubectl', commands.serviceIngress, undefined, REACH_TIMEOUT_MS);
    try {
      const ingress = JSON.parse(result.stdout.trim() || '[]') as ServiceIngress[];
      return result.code === 0 ? ingress.flatMap((entry) => (entry.ip ? [entry.ip] : [])) : [];
    } catch {
      return [];
    }
  };
  /** The pod's phase, or undefined when there is no pod. */
  const podPhase = async () => {
    const result = await runClient('kubectl', commands.podPhase);
    if (result.code === 0) return result.stdout.trim() || 'unknown';
    if (kubectlTrouble(result.stderr) === 'not found') return undefined;
    throw failure('read the pod', result);
  };
  /**
   * Has the StatefulSet run the pod anew: the pod deleted, or, when there is none (the StatefulSet scaled to 0, say by
   * a backup that was stopped), one replica asked for again.
   */
  const startPod = async () => {
    if ((await podPhase()) !== undefined) await kubectl(commands.deletePod, 'delete the pod', POD_DELETED_MS);
    else await kubectl(commands.scaleUp, 'scale the StatefulSet to 1');
  };
  const client: NodeClient = {
    where: `pod ${names.pod} in namespace ${node.namespace}`,
    async reach() {
      const result = await runClient('kubectl', commands.statefulSet, undefined, REACH_TIMEOUT_MS).catch(
        whenClientMissing(node.name, 'kubectl'),
      );
      if (result.code === 0) return;
      const place = {
        node: node.name,
        stack: context.stack,
        namespace: node.namespace,
        statefulSet: names.statefulSet,
        configFile: context.configFile,
        settingsContext: kubeContext,
        currentContext: kubeContext === undefined ? await currentKubeContext() : undefined,
        ...kubeconfigFile(),
      };
      // Stopped after REACH_TIMEOUT_MS (exit 124): what kubectl printed until then does not say why.
      const stderr = result.code === 124 ? '' : result.stderr;
      throw new NodeUnreachable(clusterProblem(place, stderr, REACH_TIMEOUT_MS / 1000));
    },
    async serviceState() {
      const phase = await podPhase();
      return phase === undefined
        ? { running: false, detail: 'no pod' }
        : { running: phase === 'Running', detail: phase };
    },
    async companionStates() {
      if (node.companions.length === 0) return [];
      const result = await runClient('kubectl', commands.containerReadiness);
      if (result.code !== 0) {
        if (kubectlTrouble(result.stderr) !== 'not found') throw failure("read the pod's containers", result);
        return node.companions.map((c) => ({ name: c.name, running: false, detail: 'no pod' }));
      }
      const ready = new Map(
        result.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('=') as [string, string]),
      );
      return node.companions.map((c) => {
        const state = ready.get(names.companionContainer(c.name));
        return {
          name: c.name,
          running: state === 'true',
          detail: state === 'true' ? 'ready' : state === 'false' ? 'not ready' : 'no such container',
        };
      });
    },
    async rpc(method, params) {
      let response: WholeAnswer;
      try {
        const request = {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: rpcRequest(method, params),
        };
        response = await fetchWithin(url, request, RPC_ANSWER_SECONDS * 1000, fetch, ANSWER_LIMITS.rpc);
      } catch (error) {
        const cause = (error as Error & { cause?: { code?: string; message?: string; errors?: { code?: string }[] } })
          .cause;
        const why = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
        throw new Error(`${method}: no answer from ${url} (${why})`);
      }
      return rpcResult(method, response.body.toString('utf8'), `${url} (HTTP ${response.status})`);
    },
    async releaseInUse() {
      const result = await runClient('kubectl', commands.besuImage);
      const image = result.stdout.trim();
      return result.code === 0 && image ? `${image} (the pod's image)` : undefined;
    },
    async recordedEnode() {
      const result = await runClient('kubectl', commands.recordedEnode, undefined, undefined, ANSWER_LIMITS.enode);
      return result.code === 0 ? result.stdout.trim() || undefined : undefined;
    },
    async movedFrom() {
      const result = await runClient('kubectl', commands.movedFrom, undefined, undefined, ANSWER_LIMITS.enode);
      return result.code === 0 ? /^enode:\/\/\S+$/.exec(result.stdout.trim())?.[0] : undefined;
    },
    async staticIp() {
      const result = await runClient('kubectl', commands.serviceIngress, undefined, REACH_TIMEOUT_MS);
      if (result.code !== 0) {
        return {
          ok: false,
          detail: `the Service's address cannot be read: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`,
        };
      }
      const text = result.stdout.trim();
      let ingress: ServiceIngress[];
      try {
        ingress = text === '' ? [] : (JSON.parse(text) as ServiceIngress[]);
      } catch {
        return { ok: false, detail: `the Service's address is not what kubectl gives (${text.slice(0, 80)})` };
      }
      // A cloud that reports a DNS name (aws) is judged by the addresses it resolves to now.
      const names = LOAD_BALANCER_FACTS[node.loadBalancer.cloud].reportsHostname
        ? ingress.flatMap((entry) => (entry.hostname ? [entry.hostname] : []))
        : [];
      const resolved = Object.fromEntries(
        await Promise.all(names.map(async (name) => [name, await resolveIpv4(name)])),
      );
      return ingressVerdict(node, ingress, resolved);
    },
    async rolloutState() {
      const result = await runClient('kubectl', commands.statefulSet, undefined, REACH_TIMEOUT_MS);
      return result.code === 0 ? statefulSetRolloutState(result.stdout) : undefined;
    },
    async recentLog() {
      return kubectl(commands.recentLog, 'read the log');
    },
    async now() {
      return Date.now() / 1000;
    },
    async startedAt() {
      const result = await runClient('kubectl', commands.startedAt);
      const time = Date.parse(result.stdout.trim());
      return result.code === 0 && !Number.isNaN(time) ? time / 1000 : undefined;
    },
    async egress() {
      // A pod leaves the cluster from its worker's address; peers reach it at its Service's load-balancer address
      // (externalTrafficPolicy Local keeps their own), which is the node's too: the enode names it.
      const worker = (await runClient('kubectl', commands.worker)).stdout.trim();
      if (!worker) return undefined;
      const balancer = await serviceIngressIps();
      const result = await runClient('kubectl', commands.workerAddresses(worker));
      const addresses = result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('='))
        .filter(([type]) => type === 'ExternalIP' || type === 'InternalIP')
        .sort(([a], [b]) => a.localeCompare(b)) // ExternalIP first
        .map(([, address]) => address);
      const moved = node.workerName !== undefined && node.workerName !== worker ? `, not ${node.workerName}` : '';
      const inbound = balancer.length > 0 ? `the Service's load-balancer address ${balancer.join(', ')} and ` : '';
      return result.code === 0 && addresses.length > 0
        ? {
            addresses: [...balancer, ...addresses],
            how: `${inbound}the addresses of worker ${worker}${moved}, the pod's`,
          }
        : undefined;
    },
    async clock() {
      const before = Date.now();
      const result = await runClient('kubectl', commands.clock);
      const after = Date.now();
      const seconds = Number(result.stdout.trim());
      return result.code === 0 && result.stdout.trim() !== '' && Number.isFinite(seconds)
        ? { offsetSeconds: clockOffset(seconds, before, after) }
        : undefined;
    },
    async diskUsage() {
      const result = await runClient('kubectl', commands.diskUsage);
      const disk = parseDiskUsage(result.stdout);
      if (result.code !== 0 && kubectlTrouble(result.stderr) === 'not found') throw new Error('no pod');
      if (result.code !== 0 || !disk) {
        throw new Error(`cannot read the data volume: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`);
      }
      return disk;
    },
    async showLogs() {
      // A pod that is not there, or whose containers have not started, has no log to show.
      const phase = await podPhase();
      if (phase === undefined || phase === 'Pending') {
        throw new ToolFailure(
          podNotRunning(
            {
              node: node.name,
              namespace: node.namespace,
              pod: names.pod,
              context: kubeContext,
              start: `npm run node -- start --stack ${context.stack} --node ${node.name}`,
            },
            phase,
          ),
        );
      }
      return attachClient('kubectl', commands.logs, withoutControlSequences);
    },
    async start() {
      await startPod();
      // The StatefulSet makes the new pod a moment later: waited for before its readiness is.
      const deadline = Date.now() + POD_APPEARS_MS;
      while ((await podPhase()) === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      await kubectl(commands.waitReady, 'see the pod ready', POD_WAIT_CLIENT_MS);
    },
    async restart() {
      await startPod();
    },
    restartHint,
    backups: clusterBackups(node, {
      withContext: (args) => (kubeContext ? ['--context', kubeContext, ...args] : args),
      head: () => client.rpc('eth_blockNumber').then(hexQuantity, () => undefined),
      enode: () => client.rpc('net_enode').then(String, () => undefined),
      recordedEnode: () => client.recordedEnode(),
      release: async () => {
        const deployed = await client.releaseInUse();
        return deployed !== undefined ? deployedRelease(deployed) : undefined;
      },
    }),
  };
  return client;
}

/** The IPv4 addresses a DNS name resolves to now; none when it does not. */
async function resolveIpv4(name: string): Promise<string[]> {
  try {
    return (await dns.lookup(name, { all: true, family: 4 })).map((entry) => entry.address);
  } catch {
    return [];
  }
}
