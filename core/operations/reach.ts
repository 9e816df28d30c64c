/**
 * Whether a node can be acted on at all, in one line: before any day-2 operation each node is looked at once (its
 * StatefulSet through kubectl, its service's unit over SSH), and when the client is missing, the kube context is not
 * there, the cluster or the machine does not answer, or the node is not deployed, the operation stops with one line
 * saying which and what to do. The client's own error output is read here (kubectl's klog lines, ssh's warnings) and
 * only its last meaningful line is kept inside that line. Pure: the client's output in, the line out.
 */
import { withoutControlSequences } from './terminalText';

/** Why a node cannot be acted on, as `status --all` shows it in the node's row. */
export type ReachState = 'no client' | 'no context' | 'unreachable' | 'denied' | 'not deployed';

/** A node that cannot be acted on: its short state and the one line saying why and what to do. */
export interface ReachProblem {
  state: ReachState;
  message: string;
}

/** klog's prefix on kubectl's log lines: `E1126 04:53:45.829183   13647 memcache.go:265] `. */
const KLOG_PREFIX = /^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+[^\s\]]+:\d+\]\s*/;
/** Lines a client prints that say nothing about the failure (ssh adding a host it was told not to check). */
const NOISE = /^Warning: Permanently added /;

/**
 * The last meaningful line of a client's error output, made one plain line: blank lines and warnings left out, klog's
 * prefix stripped, and of klog's `"Unhandled Error" err="…"` the error alone.
 */
export function lastMeaningfulLine(stderr: string): string {
  const lines = withoutControlSequences(stderr)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !NOISE.test(line))
    .map((line) => {
      const prefix = KLOG_PREFIX.exec(line);
      if (!prefix) return line;
      const rest = line.slice(prefix[0].length);
      const error = /\berr="((?:[^"\\]|\\.)*)"/.exec(rest);
      return error ? error[1].replace(/\\(.)/g, '$1') : rest;
    });
  return lines.pop() ?? '';
}

/** What kubectl prints when no cluster answers at the context's address (refused, no such host, timed out, TLS). */
const UNREACHABLE = [
  /was refused|connection refused|connection reset|Unable to connect to the server/i,
  /no such host|no route to host|network is unreachable/i,
  /i\/o timeout|deadline exceeded|Client\.Timeout|TLS handshake timeout/i,
  /x509:|tls:|\bEOF\b/,
];

/** What kubectl's error output says went wrong. */
export type KubectlTrouble = 'no context' | 'unreachable' | 'denied' | 'not found' | 'other';

/** Reads kubectl's error output (after a non-zero exit). */
export function kubectlTrouble(stderr: string): KubectlTrouble {
  if (/context "[^"]*" does not exist|current-context is not set/.test(stderr)) return 'no context';
  if (/\b(Unauthorized|Forbidden)\b|must be logged in|is forbidden/.test(stderr)) return 'denied';
  if (UNREACHABLE.some((pattern) => pattern.test(stderr))) return 'unreachable';
  if (/\(NotFound\)|\bnot found\b/.test(stderr)) return 'not found';
  return 'other';
}

/** Where a cluster node is looked for, for the messages. */
export interface ClusterPlace {
  node: string;
  stack: string;
  namespace: string;
  statefulSet: string;
  /** The stack file, where `lacchain:kubeContext` is set. */
  configFile: string;
  /** The context given by `lacchain:kubeContext`, if any. */
  settingsContext?: string;
  /** kubectl's current context, when no context is set (undefined when kubectl has none). */
  currentContext?: string;
  /** The kubeconfig kubectl reads, for messages (`$KUBECONFIG`'s value, or ~/.kube/config). */
  kubeconfig: string;
  /** Whether that file is there. */
  kubeconfigFound: boolean;
}

/**
 * The one line for a cluster node whose StatefulSet kubectl could not read: `stderr` is what kubectl printed (empty
 * when it was stopped after `timeoutSeconds`).
 */
export function clusterProblem(place: ClusterPlace, stderr: string, timeoutSeconds: number): ReachProblem {
  const line = lastMeaningfulLine(stderr) || `no answer in ${timeoutSeconds} s`;
  const trouble = stderr.trim() === '' ? 'unreachable' : kubectlTrouble(stderr);
  const context = place.settingsContext ?? place.currentContext;
  const who = `node ${place.node}`;
  if (trouble === 'no context' || context === undefined) {
    return {
      state: 'no context',
      message:
        place.settingsContext !== undefined
          ? place.kubeconfigFound
            ? `${who}: the kube context ${place.settingsContext} (lacchain:kubeContext in ${place.configFile}) is not in your kubeconfig (${place.kubeconfig}): kubectl config get-contexts lists the contexts there`
            : `${who}: the kube context ${place.settingsContext} (lacchain:kubeContext in ${place.configFile}) is not there: there is no kubeconfig (${place.kubeconfig}): add your cluster's credentials to it (your provider's get-credentials command)`
          : place.kubeconfigFound
            ? `${who}: no kube context: lacchain:kubeContext is not set in ${place.configFile} and your kubeconfig (${place.kubeconfig}) has no current context: set lacchain:kubeContext to your cluster's context (kubectl config get-contexts lists them)`
            : `${who}: no kube context: there is no kubeconfig (${place.kubeconfig}): add your cluster's credentials to it (your provider's get-credentials command) and set lacchain:kubeContext in ${place.configFile} to its context`,
    };
  }
  const quotedContext = shellWord(context);
  const ofContext = `of context ${context}`;
  switch (trouble) {
    case 'unreachable':
      return {
        state: 'unreachable',
        message: `${who}: cannot reach the cluster ${ofContext} (${line}): check kubectl --context ${quotedContext} get nodes`,
      };
    case 'denied':
      return {
        state: 'denied',
        message: `${who}: the cluster ${ofContext} refuses to show StatefulSet ${place.statefulSet} in namespace ${place.namespace} (${line}): check kubectl --context ${quotedContext} auth can-i get statefulsets -n ${place.namespace}`,
      };
    case 'not found':
      return {
        state: 'not deployed',
        message: `${who} is not deployed in namespace ${place.namespace} of context ${context} (no StatefulSet ${place.statefulSet}): run pulumi up --stack ${place.stack}`,
      };
    default:
      return {
        state: 'unreachable',
        message: `${who}: kubectl cannot read StatefulSet ${place.statefulSet} in namespace ${place.namespace} ${ofContext} (${line}): check kubectl --context ${quotedContext} get statefulset ${place.statefulSet} -n ${place.namespace}`,
      };
  }
}

/**
 * The one line when an operation needs the node's pod running and it is not: `phase` is the pod's, undefined when
 * there is no pod (its StatefulSet scaled to 0: `start`, the operation that starts it, is named); `context` the one
 * kubectl is given, if any.
 */
export function podNotRunning(
  place: { node: string; namespace: string; pod: string; context?: string; start: string },
  phase: string | undefined,
): string {
  const kubectl = `kubectl ${place.context === undefined ? '' : `--context ${shellWord(place.context)} `}`;
  return phase === undefined
    ? `node ${place.node} has no pod (${place.pod} in namespace ${place.namespace}): ${place.start} starts it`
    : `node ${place.node}: pod ${place.pod} is ${phase}, not running: ${kubectl}describe pod ${place.pod} -n ${place.namespace} says why`;
}

/** A word as a shell reads it back: as it is when plain, quoted otherwise. */
function shellWord(word: string): string {
  return /^[\w.@:/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Where an SSH node is reached, for the messages. */
export interface MachinePlace {
  node: string;
  stack: string;
  /** `user@host:port`. */
  destination: string;
  serviceName: string;
}

/** The one line for an SSH node ssh could not reach (ssh's exit 255). */
export function machineUnreachable(place: MachinePlace, stderr: string): ReachProblem {
  const line = lastMeaningfulLine(stderr) || 'ssh exited 255';
  return { state: 'unreachable', message: `node ${place.node}: cannot reach ${place.destination} over SSH: ${line}` };
}

/** The one line for an SSH node whose machine has no service of the node: not deployed there. */
export function machineNotDeployed(place: MachinePlace): ReachProblem {
  return {
    state: 'not deployed',
    message: `node ${place.node} is not deployed on ${place.destination} (no service ${place.serviceName} there): run pulumi up --stack ${place.stack}`,
  };
}

/** The one line when the client itself (kubectl, ssh) is not there. */
export function clientMissing(node: string, client: string): ReachProblem {
  const what = client === 'kubectl' ? 'the cluster' : 'the machine';
  return {
    state: 'no client',
    message: `node ${node}: ${client} is not installed or not on PATH: install it to reach ${what}`,
  };
}
