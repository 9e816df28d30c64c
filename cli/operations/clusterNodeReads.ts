/**
 * The questions of a Kubernetes node that its pod and its Service answer (clusterNodeClient.ts): each answered from
 * kubectl's JSON of the object. Given reads that run kubectl anew each time, every question reads the object anew;
 * given reads run once (a look at the node: status, one check's observations), the questions share one read of each.
 */
import { promises as dns } from 'dns';
import { kubernetesNames } from '../../core/catalog/kubernetes';
import { ANSWER_LIMITS } from '../../core/catalog/answers';
import { LOAD_BALANCER_FACTS } from '../../core/catalog/loadBalancers';
import { ingressVerdict, IngressVerdict } from '../../core/kubernetes/loadBalancer';
import { PodAnswers, podAnswers } from '../../core/operations/podAnswers';
import { ServiceAnswers, serviceAnswers } from '../../core/operations/serviceAnswers';
import { kubectlTrouble, lastMeaningfulLine } from '../../core/operations/reach';
import type { kubectlCommands } from '../../core/operations/clients';
import type { CompanionState } from '../../core/operations/health';
import type { KubernetesNodeSettings } from '../../core/settings/model';
import { ToolFailure } from '../cli';
import type { Egress, NodeClient } from './nodeClientTypes';
import { AnswerTooLarge, ClientResult, runClient } from './process';

/** kubectl's answer about one object of the node (its pod, its Service). */
export type ObjectRead = () => Promise<ClientResult>;

/** What kubectl could not do for `node`, in one line: what it was asked, and its last words. */
export function kubectlFailure(
  node: KubernetesNodeSettings,
  what: string,
  result: { code: number; stderr: string },
): ToolFailure {
  return new ToolFailure(
    `node ${node.name}: kubectl cannot ${what}: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`,
  );
}

/** `read`, run once: every later call has the first one's answer. */
export function once<T>(read: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () => (answer ??= read());
}

/** kubectl's reads of the node's objects. */
export interface NodeObjectReads {
  pod: ObjectRead;
  service: ObjectRead;
}

/**
 * The node's questions answered from `reads`, kubectl's reads of its pod and its Service (and of its worker, read anew
 * with `commands`).
 */
export function clusterNodeReads(
  node: KubernetesNodeSettings,
  commands: ReturnType<typeof kubectlCommands>,
  { pod, service }: NodeObjectReads,
) {
  const names = kubernetesNames(node.name);
  /** The pod's answers, or undefined when there is no pod; otherwise throws, saying `what` kubectl could not do. */
  const podOrFailure = async (what: string): Promise<PodAnswers | undefined> => {
    const result = await pod();
    if (result.code !== 0) {
      if (kubectlTrouble(result.stderr) === 'not found') return undefined;
      throw kubectlFailure(node, what, result);
    }
    try {
      return podAnswers(result.stdout, names.besuContainer);
    } catch {
      throw new ToolFailure(
        `node ${node.name}: kubectl cannot ${what}: its answer is not the pod's JSON (${result.stdout.trim().slice(0, 80)})`,
      );
    }
  };
  /** The answers `read` from kubectl's JSON of an object, or undefined when kubectl did not give that JSON. */
  const ifRead = async <T>(read: ObjectRead, answers: (json: string) => T): Promise<T | undefined> => {
    const result = await read();
    if (result.code !== 0) return undefined;
    try {
      return answers(result.stdout);
    } catch {
      return undefined;
    }
  };
  /** The pod's answers, or undefined when they cannot be read (no pod, or kubectl failed). */
  const podIfRead = () => ifRead(pod, (json) => podAnswers(json, names.besuContainer));
  /** The Service's answers, or undefined when they cannot be read. */
  const serviceIfRead = () => ifRead(service, serviceAnswers);
  /** An enode annotation as read, refused past the bound of an enode's answer (ANSWER_LIMITS.enode). */
  const enodeAnnotation = (value: string, name: string): string => {
    if (Buffer.byteLength(value) <= ANSWER_LIMITS.enode) return value;
    throw new AnswerTooLarge(
      `node ${node.name}: the Service's ${name} is more than ${ANSWER_LIMITS.enode} bytes, not an enode: check what wrote it there`,
    );
  };
  /** The pod's phase, or undefined when there is no pod. */
  const podPhase = async (): Promise<string | undefined> => {
    const answers = await podOrFailure('read the pod');
    return answers === undefined ? undefined : answers.phase || 'unknown';
  };
  /** The questions of NodeClient answered here. */
  const questions = {
    async serviceState() {
      const phase = await podPhase();
      return phase === undefined
        ? { running: false, detail: 'no pod' }
        : { running: phase === 'Running', detail: phase };
    },
    async companionStates(): Promise<CompanionState[]> {
      if (node.companions.length === 0) return [];
      const answers = await podOrFailure("read the pod's containers");
      return node.companions.map((c) => {
        if (answers === undefined) return { name: c.name, running: false, detail: 'no pod' };
        const state = answers.containersReady.get(names.companionContainer(c.name));
        return {
          name: c.name,
          running: state === 'true',
          detail: state === 'true' ? 'ready' : state === 'false' ? 'not ready' : 'no such container',
        };
      });
    },
    async releaseInUse(): Promise<string | undefined> {
      const image = (await podIfRead())?.besuImage;
      return image ? `${image} (the pod's image)` : undefined;
    },
    async startedAt(): Promise<number | undefined> {
      const time = Date.parse((await podIfRead())?.besuStartedAt ?? '');
      return Number.isNaN(time) ? undefined : time / 1000;
    },
    async recordedEnode(): Promise<string | undefined> {
      const enode = (await serviceIfRead())?.recordedEnode;
      return enode ? enodeAnnotation(enode, 'enode annotation').trim() || undefined : undefined;
    },
    async movedFrom(): Promise<string | undefined> {
      const enode = (await serviceIfRead())?.movedFromEnode;
      return enode ? /^enode:\/\/\S+$/.exec(enodeAnnotation(enode, 'moved-from annotation').trim())?.[0] : undefined;
    },
    async staticIp(): Promise<IngressVerdict> {
      const result = await service();
      if (result.code !== 0) {
        return {
          ok: false,
          detail: `the Service's address cannot be read: ${lastMeaningfulLine(result.stderr) || `exit ${result.code}`}`,
        };
      }
      let ingress: ServiceAnswers['ingress'];
      try {
        ingress = serviceAnswers(result.stdout).ingress;
      } catch {
        const text = result.stdout.trim();
        return { ok: false, detail: `the Service's address is not what kubectl gives (${text.slice(0, 80)})` };
      }
      // A cloud that reports a DNS name (aws) is judged by the addresses it resolves to now.
      const hostnames = LOAD_BALANCER_FACTS[node.loadBalancer.cloud].reportsHostname
        ? ingress.flatMap((entry) => (entry.hostname ? [entry.hostname] : []))
        : [];
      const resolved = Object.fromEntries(
        await Promise.all(hostnames.map(async (name) => [name, await resolveIpv4(name)])),
      );
      return ingressVerdict(node, ingress, resolved);
    },
    async egress(): Promise<Egress | undefined> {
      // A pod leaves the cluster from its worker's address; peers reach it at its Service's load-balancer address
      // (externalTrafficPolicy Local keeps their own), which is the node's too: the enode names it.
      const worker = (await podIfRead())?.worker;
      if (!worker) return undefined;
      const balancer = ((await serviceIfRead())?.ingress ?? []).flatMap((entry) => (entry.ip ? [entry.ip] : []));
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
  } satisfies Partial<NodeClient>;
  return { podPhase, questions };
}

/** The IPv4 addresses a DNS name resolves to now; none when it does not. */
async function resolveIpv4(name: string): Promise<string[]> {
  try {
    return (await dns.lookup(name, { all: true, family: 4 })).map((entry) => entry.address);
  } catch {
    return [];
  }
}
