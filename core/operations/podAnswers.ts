/**
 * What one read of a node's pod (`kubectl get pod NAME -o json`) answers of `npm run node`'s questions: its phase,
 * each container's readiness, Besu's image and start, and the worker it runs on. Read once for all the questions of
 * one look at the node (status, check's observations) instead of one kubectl run each. Pure: kubectl's JSON in,
 * answers out.
 */

/** The pod's answers, each as kubectl's jsonpath of that field printed it: empty when the pod has no such field. */
export interface PodAnswers {
  /** `status.phase` (Pending, Running, …). */
  phase: string;
  /** Each container's readiness (`status.containerStatuses[*].ready`) by container name: `true` or `false`. */
  containersReady: ReadonlyMap<string, string>;
  /** The Besu container's image (`spec.containers[name=besu].image`): the release in use. */
  besuImage: string;
  /** When the Besu container last started (RFC 3339: `status.containerStatuses[name=besu].state.running.startedAt`). */
  besuStartedAt: string;
  /** The worker the pod runs on (`spec.nodeName`). */
  worker: string;
}

/** The part of a pod object the answers come from. */
interface PodObject {
  kind?: unknown;
  spec?: { nodeName?: unknown; containers?: { name?: unknown; image?: unknown }[] };
  status?: {
    phase?: unknown;
    containerStatuses?: { name?: unknown; ready?: unknown; state?: { running?: { startedAt?: unknown } } }[];
  };
}

/** A field printed as kubectl's jsonpath prints it: a string as it is, a boolean as true or false, nothing as empty. */
function printed(value: unknown): string {
  return typeof value === 'string' || typeof value === 'boolean' ? String(value) : '';
}

/**
 * The answers of `json`, kubectl's JSON of the node's pod, whose Besu container is named `besuContainer`; throws when
 * it is not a pod's JSON.
 */
export function podAnswers(json: string, besuContainer: string): PodAnswers {
  const pod = JSON.parse(json) as PodObject | null;
  if (pod === null || typeof pod !== 'object' || pod.kind !== 'Pod') throw new Error('not a pod');
  const statuses = Array.isArray(pod.status?.containerStatuses) ? pod.status.containerStatuses : [];
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  const besu = statuses.find((each) => each.name === besuContainer);
  return {
    phase: printed(pod.status?.phase),
    containersReady: new Map(statuses.map((each) => [printed(each.name), printed(each.ready)])),
    besuImage: printed(containers.find((each) => each.name === besuContainer)?.image),
    besuStartedAt: printed(besu?.state?.running?.startedAt),
    worker: printed(pod.spec?.nodeName),
  };
}
