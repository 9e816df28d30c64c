/**
 * A Kubernetes node seen from the operator's machine: `npm run node`'s questions asked through kubectl (the pod, its
 * containers, its worker; clusterNodeReads.ts) and the node's RPC URL.
 */
import { statefulSetRolloutState } from '../../core/operations/rolloutState';
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
import { fetchWithin, type WholeAnswer } from '../../core/fetchWithin';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import { clusterBackups } from './clusterBackups';
import { clockOffset } from './nodeClock';
import type { ClientContext, NodeClient } from './nodeClientTypes';
import { NodeUnreachable, REACH_TIMEOUT_MS, whenClientMissing } from './nodeUnreachable';
import { attachClient, runClient } from './process';
import { clusterNodeReads, kubectlFailure, once } from './clusterNodeReads';

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
  const failure = (what: string, result: { code: number; stderr: string }) => kubectlFailure(node, what, result);
  const kubectl = async (args: string[], what: string, timeoutMs?: number) => {
    const result = await runClient('kubectl', args, undefined, timeoutMs);
    if (result.code !== 0) throw failure(what, result);
    return result.stdout;
  };
  /** kubectl's answer about the node's pod: its JSON (core/operations/podAnswers.ts). */
  const readPod = () => runClient('kubectl', commands.pod);
  /** kubectl's answer about the node's Service: its JSON (core/operations/serviceAnswers.ts). */
  const readService = () => runClient('kubectl', commands.service, undefined, REACH_TIMEOUT_MS);
  // Every question reads anew, unless asked in a look (below).
  const { podPhase, questions } = clusterNodeReads(node, commands, { pod: readPod, service: readService });
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
    ...questions,
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
    look() {
      // Read once for the look, whose questions share the reads: valid until something changes the node.
      const shared = clusterNodeReads(node, commands, { pod: once(readPod), service: once(readService) });
      return { ...client, ...shared.questions };
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
