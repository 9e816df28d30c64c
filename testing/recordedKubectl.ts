/**
 * The recorded kubectl's answers about a node's pod and Service (tests/fixtures/recorded-kubectl: pod.json and
 * service.json in its answers folder): the writer's objects as `kubectl get -o json` printed them from the test
 * cluster of tests/cluster/operations.test.ts (a real API server; the pod's status kwok's), in
 * tests/fixtures/kubectl-json, changed as a test needs.
 */
import * as fs from 'fs';
import * as path from 'path';
import { IDENTITY_ANNOTATIONS } from '../core/catalog/kubernetes';
import { PROJECT_DIR } from './run';

/** The writer's objects as kubectl printed them (`kubectl get pod|service NAME -o json`). */
export const KUBECTL_JSON = {
  pod: path.join(PROJECT_DIR, 'tests/fixtures/kubectl-json/pod.json'),
  service: path.join(PROJECT_DIR, 'tests/fixtures/kubectl-json/service.json'),
};

/** How a test wants the writer's pod. */
export interface PodChanges {
  /** Its phase (Running as recorded). */
  phase?: string;
  /** The Besu container's image. */
  besuImage?: string;
  /** Containers not ready. */
  notReady?: string[];
  /** Containers the pod does not have. */
  without?: string[];
}

interface ContainerStatus {
  name: string;
  ready: boolean;
}

/** Writes the pod kubectl answers into `answers`, the recorded pod changed by `changes`. */
export function writePodAnswer(answers: string, changes: PodChanges = {}): void {
  const pod = JSON.parse(fs.readFileSync(KUBECTL_JSON.pod, 'utf8'));
  const without = changes.without ?? [];
  if (changes.phase !== undefined) pod.status.phase = changes.phase;
  pod.spec.containers = pod.spec.containers
    .filter((c: { name: string }) => !without.includes(c.name))
    .map((c: { name: string; image: string }) =>
      c.name.endsWith('-besu') && changes.besuImage ? { ...c, image: changes.besuImage } : c,
    );
  pod.status.containerStatuses = pod.status.containerStatuses
    .filter((c: ContainerStatus) => !without.includes(c.name))
    .map((c: ContainerStatus) => ({ ...c, ready: !(changes.notReady ?? []).includes(c.name) }));
  fs.writeFileSync(path.join(answers, 'pod.json'), JSON.stringify(pod, null, 4));
}

/** Writes the Service kubectl answers into `answers`: the recorded one with `enode` annotated and `ingress` given. */
export function writeServiceAnswer(answers: string, enode: string, ingress: object[]): void {
  const service = JSON.parse(fs.readFileSync(KUBECTL_JSON.service, 'utf8'));
  service.metadata.annotations[IDENTITY_ANNOTATIONS.enode] = enode;
  service.status.loadBalancer = { ingress };
  fs.writeFileSync(path.join(answers, 'service.json'), JSON.stringify(service, null, 4));
}
