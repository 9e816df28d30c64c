/**
 * The harness's reads of the test cluster, straight from its API server over HTTPS with the kubeconfig's client
 * certificate: a test's waits read a field four times a second, and each kubectl is a process start (about 40 ms of a
 * core on the CI machine, issue 67) where a read over a kept-alive connection costs the test process next to nothing.
 * Reads only: what changes the cluster stays with kubectl, as an operator would run it.
 */
import * as fs from 'fs';
import * as https from 'https';
import * as yaml from 'js-yaml';
import { jsonPathText, knownTemplate, TemplateError, UnsupportedTemplate } from './jsonPath';

/** An answer of the API server: its status code and body (parsed when JSON). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

interface Connection {
  server: string;
  agent: https.Agent;
}

/** One connection per kubeconfig (its server, CA and client certificate), kept alive between reads. */
const connections = new Map<string, Connection>();

interface Kubeconfig {
  'current-context': string;
  contexts: { name: string; context: { cluster: string; user: string } }[];
  clusters: { name: string; cluster: { server: string; 'certificate-authority': string } }[];
  users: { name: string; user: { 'client-certificate': string; 'client-key': string } }[];
}

function connectionOf(kubeconfig: string): Connection {
  const known = connections.get(kubeconfig);
  if (known) return known;
  const config = yaml.load(fs.readFileSync(kubeconfig, 'utf8')) as Kubeconfig;
  const context = config.contexts.find((c) => c.name === config['current-context'])!.context;
  const cluster = config.clusters.find((c) => c.name === context.cluster)!.cluster;
  const user = config.users.find((u) => u.name === context.user)!.user;
  const connection = {
    server: cluster.server,
    agent: new https.Agent({
      keepAlive: true,
      ca: fs.readFileSync(cluster['certificate-authority']),
      cert: fs.readFileSync(user['client-certificate']),
      key: fs.readFileSync(user['client-key']),
    }),
  };
  connections.set(kubeconfig, connection);
  return connection;
}

/** How long one read may take before it fails (kubectl's own reads end on a refused connection, not on a slow one). */
const READ_TIMEOUT_MS = 30_000;

/**
 * GETs `apiPath` (`/api/v1/namespaces/x/pods/y`, `/readyz`) from `kubeconfig`'s cluster; rejects when unreachable. A
 * kept connection the server closed as it was reused is dialled again once (Node's advice for kept-alive requests).
 */
export function apiGet(kubeconfig: string, apiPath: string, again = true): Promise<ApiAnswer> {
  const { server, agent } = connectionOf(kubeconfig);
  return new Promise((resolve, reject) => {
    const request = https.get(`${server}${apiPath}`, { agent, timeout: READ_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        if (String(response.headers['content-type']).startsWith('application/json')) body = JSON.parse(text);
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    request.on('timeout', () => request.destroy(new Error(`no answer from ${server}${apiPath} in 30 s`)));
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (again && request.reusedSocket && error.code === 'ECONNRESET') resolve(apiGet(kubeconfig, apiPath, false));
      else reject(error);
    });
  });
}

/** Where the API serves a kind (as kubectl names it, singular, plural or short) and whether it is namespaced. */
interface Resource {
  prefix: string;
  plural: string;
  namespaced: boolean;
}

const core = (plural: string, namespaced = true): Resource => ({ prefix: '/api/v1', plural, namespaced });
const group = (groupVersion: string, plural: string): Resource => ({
  prefix: `/apis/${groupVersion}`,
  plural,
  namespaced: true,
});

/** The kinds the tests read, by every name kubectl takes for them. */
const RESOURCES: Record<string, Resource> = {};
for (const [names, resource] of [
  [['pod', 'pods', 'po'], core('pods')],
  [['service', 'services', 'svc'], core('services')],
  [['configmap', 'configmaps', 'cm'], core('configmaps')],
  [['secret', 'secrets'], core('secrets')],
  [['serviceaccount', 'serviceaccounts', 'sa'], core('serviceaccounts')],
  [['pvc', 'persistentvolumeclaim', 'persistentvolumeclaims'], core('persistentvolumeclaims')],
  [['node', 'nodes', 'no'], core('nodes', false)],
  [['namespace', 'namespaces', 'ns'], core('namespaces', false)],
  [['statefulset', 'statefulsets', 'sts'], group('apps/v1', 'statefulsets')],
  [['deployment', 'deployments', 'deploy'], group('apps/v1', 'deployments')],
  [['job', 'jobs'], group('batch/v1', 'jobs')],
  [['cronjob', 'cronjobs', 'cj'], group('batch/v1', 'cronjobs')],
  [['endpointslice', 'endpointslices'], group('discovery.k8s.io/v1', 'endpointslices')],
  [['volumesnapshot', 'volumesnapshots'], group('snapshot.storage.k8s.io/v1', 'volumesnapshots')],
] as const) {
  for (const name of names) RESOURCES[name] = resource;
}

/** An object by kind and name, or (with `selector`) the list of those its labels select; as `kubectl get` takes it. */
export interface ApiObject {
  kind: string;
  name: string;
  /** Ignored for a kind outside namespaces (a Node). */
  namespace: string;
  /** A label selector (`job-name=run-1`): the list of the objects it selects; '' for all of them. */
  selector?: string;
}

/** The API path `kubectl get` reads `object` from; undefined for a kind not in RESOURCES. */
function objectPath(object: ApiObject): string | undefined {
  const resource = RESOURCES[object.kind.toLowerCase()];
  if (!resource) return undefined;
  const where = resource.namespaced ? `/namespaces/${encodeURIComponent(object.namespace)}` : '';
  const list = `${resource.prefix}${where}/${resource.plural}`;
  if (object.selector === undefined) return `${list}/${encodeURIComponent(object.name)}`;
  return object.selector ? `${list}?labelSelector=${encodeURIComponent(object.selector)}` : list;
}

/**
 * What `kubectl get <object> -o jsonpath=<template>` prints, read over HTTPS: its output, or its error line when it
 * would fail (`Error from server (NotFound): pods "x" not found`, an index out of range, the server unreachable).
 * Undefined for a kind or a template form this reader does not know: the caller asks kubectl.
 */
export async function apiField(kubeconfig: string, object: ApiObject, template: string): Promise<string | undefined> {
  const where = objectPath(object);
  if (!where) return undefined;
  try {
    const answer = await apiGet(kubeconfig, where);
    if (answer.status !== 200) {
      const status = answer.body as { reason?: string; message?: string };
      return `Error from server (${status.reason ?? answer.status}): ${status.message ?? String(answer.body)}\n`;
    }
    return jsonPathText(template, answer.body);
  } catch (error) {
    if (error instanceof UnsupportedTemplate) return undefined;
    if (error instanceof TemplateError) return `error: ${error.message}\n`;
    return `error: ${(error as Error).message}\n`;
  }
}

/**
 * Watches the named `object` (one request the API server answers with each change): `seen` is told its field by
 * `template` now and after each change, until `stop()`; `ended` when the server ends the watch. False (nothing
 * started) for a kind or a template form this reader does not know.
 */
export function apiWatch(
  kubeconfig: string,
  object: ApiObject,
  template: string,
  seen: (value: string) => void,
  ended: () => void,
): { stop(): void } | false {
  const list = objectPath({ ...object, selector: '' });
  if (!list) return false;
  if (!knownTemplate(template)) return false;
  const { server, agent } = connectionOf(kubeconfig);
  const selector = encodeURIComponent(`metadata.name=${object.name}`);
  const request = https.get(`${server}${list}?watch=true&fieldSelector=${selector}`, { agent }, (response) => {
    let text = '';
    response.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const events = text.split('\n');
      text = events.pop() ?? '';
      for (const event of events.filter(Boolean)) {
        const { type, object: changed } = JSON.parse(event) as { type: string; object: unknown };
        if (type === 'ERROR') continue;
        try {
          seen(jsonPathText(template, changed));
        } catch (error) {
          seen(`error: ${(error as Error).message}\n`);
        }
      }
    });
    response.on('end', ended);
    response.on('error', ended);
  });
  request.on('error', ended);
  return { stop: () => request.destroy() };
}
