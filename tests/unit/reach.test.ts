/**
 * Whether a node can be acted on, in one line: kubectl's and ssh's error output (as they print it, klog lines
 * included) read into which of the client, the kube context, the cluster, the machine or the deployment is missing,
 * and what to do.
 */
import {
  clientMissing,
  ClusterPlace,
  clusterProblem,
  kubectlTrouble,
  lastMeaningfulLine,
  machineNotDeployed,
  machineUnreachable,
  podNotRunning,
} from '../../core/operations/reach';
import { itAnswers } from '../../testing/answers';

/** kubectl 1.32's output for a server that refuses connections: discovery's five klog lines, then its own line. */
const klog = (err: string) =>
  `E1126 04:53:45.829183   13647 memcache.go:265] "Unhandled Error" err="couldn't get current server API group list: Get \\"https://127.0.0.1:1/api?timeout=32s\\": ${err}"\n`;
const REFUSED =
  klog('dial tcp 127.0.0.1:1: connect: connection refused').repeat(5) +
  'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n';
const NO_SUCH_HOST =
  klog('dial tcp: lookup k8s.example.invalid on 10.0.0.53:53: no such host').repeat(5) +
  'Unable to connect to the server: dial tcp: lookup k8s.example.invalid on 10.0.0.53:53: no such host\n';
const TIMEOUT =
  'Unable to connect to the server: net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)\n';
const NO_CONTEXT = 'error: context "prod" does not exist\n';
const NOT_FOUND = 'Error from server (NotFound): statefulsets.apps "besu-node-writer" not found\n';
const UNAUTHORIZED = 'error: You must be logged in to the server (Unauthorized)\n';
const FORBIDDEN =
  'Error from server (Forbidden): statefulsets.apps "besu-node-writer" is forbidden: User "dev" cannot get resource "statefulsets" in API group "apps" in the namespace "lacchain"\n';

const place: ClusterPlace = {
  node: 'writer',
  stack: 'testnet',
  namespace: 'lacchain',
  statefulSet: 'besu-node-writer',
  configFile: 'Pulumi.testnet.yaml',
  settingsContext: 'prod',
  kubeconfig: '~/.kube/config',
  kubeconfigFound: true,
};

describe("a client's error output, one line", () => {
  it("keeps kubectl's last line, never its klog lines", () => {
    expect(lastMeaningfulLine(REFUSED)).toBe(
      'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?',
    );
  });

  it("of klog's lines alone, keeps the error without the prefix", () => {
    expect(lastMeaningfulLine(klog('dial tcp 127.0.0.1:1: connect: connection refused'))).toBe(
      'couldn\'t get current server API group list: Get "https://127.0.0.1:1/api?timeout=32s": dial tcp 127.0.0.1:1: connect: connection refused',
    );
    expect(lastMeaningfulLine('W0102 03:04:05.000006    42 loader.go:222] config not found: /x\n')).toBe(
      'config not found: /x',
    );
  });

  it("leaves out ssh's warnings, blank lines and control characters", () => {
    expect(
      lastMeaningfulLine(
        "Warning: Permanently added '10.0.0.7' (ED25519) to the list of known hosts.\r\nConnection closed by 10.0.0.7 port 22\r\n\n",
      ),
    ).toBe('Connection closed by 10.0.0.7 port 22');
    expect(lastMeaningfulLine('bad \u001b[31mred\u001b[0m\n')).toBe('bad red');
    expect(lastMeaningfulLine('')).toBe('');
  });
});

describe("what kubectl's error says", () => {
  itAnswers('%j: %s', kubectlTrouble, [
    [REFUSED, 'unreachable'],
    [NO_SUCH_HOST, 'unreachable'],
    [TIMEOUT, 'unreachable'],
    ['Unable to connect to the server: context deadline exceeded\n', 'unreachable'],
    [
      'Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority\n',
      'unreachable',
    ],
    [NO_CONTEXT, 'no context'],
    ['error: current-context is not set\n', 'no context'],
    [NOT_FOUND, 'not found'],
    [UNAUTHORIZED, 'denied'],
    [FORBIDDEN, 'denied'],
    ['error: something else\n', 'other'],
  ]);
});

describe('the one line of a cluster node that cannot be acted on', () => {
  it('a cluster that does not answer: which context, what kubectl said, the command to check', () => {
    const problem = clusterProblem(place, REFUSED, 20);
    expect(problem).toEqual({
      state: 'unreachable',
      message:
        'node writer: cannot reach the cluster of context prod (The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?): check kubectl --context prod get nodes',
    });
    expect(problem.message).not.toMatch(/\n|memcache|E1126/);
  });

  it('no answer at all (kubectl stopped): the time waited; the current context when the stack sets none', () => {
    expect(clusterProblem({ ...place, settingsContext: undefined, currentContext: 'kind-dev' }, '', 20).message).toBe(
      'node writer: cannot reach the cluster of context kind-dev (no answer in 20 s): check kubectl --context kind-dev get nodes',
    );
  });

  it('the StatefulSet not there: not deployed, run pulumi up', () => {
    expect(clusterProblem(place, NOT_FOUND, 20)).toEqual({
      state: 'not deployed',
      message:
        'node writer is not deployed in namespace lacchain of context prod (no StatefulSet besu-node-writer): run pulumi up --stack testnet',
    });
  });

  it('the kube context of the stack not in the kubeconfig, or no kubeconfig', () => {
    expect(clusterProblem(place, NO_CONTEXT, 20)).toEqual({
      state: 'no context',
      message:
        'node writer: the kube context prod (lacchain:kubeContext in Pulumi.testnet.yaml) is not in your kubeconfig (~/.kube/config): kubectl config get-contexts lists the contexts there',
    });
    expect(clusterProblem({ ...place, kubeconfigFound: false }, NO_CONTEXT, 20).message).toMatch(
      /^node writer: the kube context prod \(lacchain:kubeContext in Pulumi.testnet.yaml\) is not there: there is no kubeconfig \(~\/.kube\/config\)/,
    );
  });

  it('no context set and none current: set lacchain:kubeContext', () => {
    const none = { ...place, settingsContext: undefined, currentContext: undefined };
    expect(clusterProblem(none, REFUSED, 20)).toEqual({
      state: 'no context',
      message:
        "node writer: no kube context: lacchain:kubeContext is not set in Pulumi.testnet.yaml and your kubeconfig (~/.kube/config) has no current context: set lacchain:kubeContext to your cluster's context (kubectl config get-contexts lists them)",
    });
    expect(clusterProblem({ ...none, kubeconfigFound: false }, REFUSED, 20).message).toMatch(
      /^node writer: no kube context: there is no kubeconfig \(~\/.kube\/config\)/,
    );
  });

  it('credentials refused, and anything else: what kubectl said, the command to look further', () => {
    expect(clusterProblem(place, FORBIDDEN, 20)).toMatchObject({
      state: 'denied',
      message: expect.stringMatching(
        /^node writer: the cluster of context prod refuses to show StatefulSet besu-node-writer in namespace lacchain \(Error from server \(Forbidden\): .*\): check kubectl --context prod auth can-i get statefulsets -n lacchain$/,
      ),
    });
    expect(clusterProblem(place, 'error: something else\n', 20).message).toBe(
      'node writer: kubectl cannot read StatefulSet besu-node-writer in namespace lacchain of context prod (error: something else): check kubectl --context prod get statefulset besu-node-writer -n lacchain',
    );
  });

  it('quotes a context name the shell would split', () => {
    expect(clusterProblem({ ...place, settingsContext: "o'k ctx" }, REFUSED, 20).message).toMatch(
      /check kubectl --context 'o'\\''k ctx' get nodes$/,
    );
  });

  it('a pod that does not run, for an operation that needs it', () => {
    const where = {
      node: 'writer',
      namespace: 'lacchain',
      pod: 'besu-node-writer-0',
      start: 'npm run node -- start --stack testnet --node writer',
    };
    expect(podNotRunning({ ...where, context: 'prod' }, 'Pending')).toBe(
      'node writer: pod besu-node-writer-0 is Pending, not running: kubectl --context prod describe pod besu-node-writer-0 -n lacchain says why',
    );
    expect(podNotRunning(where, 'Pending')).toMatch(/: kubectl describe pod besu-node-writer-0 -n lacchain says why$/);
    expect(podNotRunning(where, undefined)).toBe(
      'node writer has no pod (besu-node-writer-0 in namespace lacchain): npm run node -- start --stack testnet --node writer starts it',
    );
  });
});

describe('the one line of a machine that cannot be acted on', () => {
  const machine = { node: 'validator', stack: 'testnet', destination: 'admin@190.51.100.7:22', serviceName: 'besu' };

  it("ssh's exit 255: cannot reach, with ssh's last line", () => {
    expect(
      machineUnreachable(
        machine,
        "Warning: Permanently added '190.51.100.7' (ED25519) to the list of known hosts.\r\nssh: connect to host 190.51.100.7 port 22: Connection refused\r\n",
      ),
    ).toEqual({
      state: 'unreachable',
      message:
        'node validator: cannot reach admin@190.51.100.7:22 over SSH: ssh: connect to host 190.51.100.7 port 22: Connection refused',
    });
  });

  it('no service of the node there: not deployed', () => {
    expect(machineNotDeployed(machine)).toEqual({
      state: 'not deployed',
      message:
        'node validator is not deployed on admin@190.51.100.7:22 (no service besu there): run pulumi up --stack testnet',
    });
  });

  it('the client not installed', () => {
    expect(clientMissing('writer', 'kubectl')).toEqual({
      state: 'no client',
      message: 'node writer: kubectl is not installed or not on PATH: install it to reach the cluster',
    });
  });
});
