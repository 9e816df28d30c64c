/**
 * One read of a node's pod and of its Service answers all of `npm run node`'s questions about them
 * (core/operations/podAnswers.ts, serviceAnswers.ts): read from the JSON kubectl printed for the writer's objects
 * from a real API server (tests/fixtures/kubectl-json, testing/recordedKubectl.ts), and from that JSON changed into the
 * other states a pod passes through.
 */
import * as fs from 'fs';
import { podAnswers } from '../../core/operations/podAnswers';
import { serviceAnswers } from '../../core/operations/serviceAnswers';
import { IDENTITY_ANNOTATIONS } from '../../core/catalog/kubernetes';
import { MOVED_FROM_ENODE_ANNOTATION } from '../../core/catalog/move';
import { KUBECTL_JSON } from '../../testing/recordedKubectl';

const POD = fs.readFileSync(KUBECTL_JSON.pod, 'utf8');
const SERVICE = fs.readFileSync(KUBECTL_JSON.service, 'utf8');

/** The fields of the recorded pod the tests change. */
interface PodJson {
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status?: {
    phase?: string;
    qosClass?: string;
    containerStatuses?: { name: string; ready: boolean; state: object }[];
  };
}

/** The recorded pod with `change` made to its object. */
function podWith(change: (pod: PodJson) => void): string {
  const pod = JSON.parse(POD);
  change(pod);
  return JSON.stringify(pod);
}

describe("a pod's answers", () => {
  it('a running pod: its phase, each container ready, Besu image and start, its worker', () => {
    const answers = podAnswers(POD, 'writer-besu');
    expect(answers.phase).toBe('Running');
    expect([...answers.containersReady]).toEqual([
      ['writer-besu', 'true'],
      ['writer-metrics-relay', 'true'],
      ['writer-nginx', 'true'],
      ['writer-relay-signer', 'true'],
      ['writer-ethstats', 'true'],
    ]);
    expect(answers.besuImage).toBe('hyperledger/besu:23.4.1');
    expect(answers.besuStartedAt).toBe('2026-12-07T19:14:51Z');
    expect(answers.worker).toBe('worker-writer');
  });

  it('a pod just made: Pending, no container status yet, no worker', () => {
    const answers = podAnswers(
      podWith((pod) => {
        pod.status = { phase: 'Pending', qosClass: 'Burstable' };
        delete pod.spec.nodeName;
      }),
      'writer-besu',
    );
    expect(answers).toEqual({
      phase: 'Pending',
      containersReady: new Map(),
      besuImage: JSON.parse(POD).spec.containers[0].image,
      besuStartedAt: '',
      worker: '',
    });
  });

  it('Besu restarting (CrashLoopBackOff): not ready, no start time, its companions as they are', () => {
    const answers = podAnswers(
      podWith((pod) => {
        const besu = pod.status!.containerStatuses!.find((c) => c.name === 'writer-besu')!;
        besu.ready = false;
        besu.state = { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' } };
      }),
      'writer-besu',
    );
    expect(answers.containersReady.get('writer-besu')).toBe('false');
    expect(answers.containersReady.get('writer-relay-signer')).toBe('true');
    expect(answers.besuStartedAt).toBe('');
  });

  it('no phase at all is empty, as kubectl printed it', () => {
    expect(
      podAnswers(
        podWith((pod) => delete pod.status),
        'writer-besu',
      ).phase,
    ).toBe('');
  });

  it('what is not a pod is refused: another kind, a list, not JSON', () => {
    expect(() => podAnswers(SERVICE, 'writer-besu')).toThrow('not a pod');
    expect(() => podAnswers('{"apiVersion":"v1","kind":"List","items":[]}', 'writer-besu')).toThrow('not a pod');
    expect(() => podAnswers('null', 'writer-besu')).toThrow('not a pod');
    expect(() => podAnswers('Running', 'writer-besu')).toThrow(SyntaxError);
  });
});

describe("a Service's answers", () => {
  it('the recorded enode, no move, and the ingress the cloud gave', () => {
    const service = JSON.parse(SERVICE);
    expect(serviceAnswers(SERVICE)).toEqual({
      recordedEnode: service.metadata.annotations[IDENTITY_ANNOTATIONS.enode],
      movedFromEnode: '',
      ingress: service.status.loadBalancer.ingress,
    });
    expect(serviceAnswers(SERVICE).recordedEnode).toMatch(/^enode:\/\/[0-9a-f]+@/);
  });

  it('a moved node: the enode it had before; a Service the cloud has not served yet: no ingress', () => {
    const service = JSON.parse(SERVICE);
    service.metadata.annotations[MOVED_FROM_ENODE_ANNOTATION] = 'enode://abc@190.51.100.7:60606';
    service.status = { loadBalancer: {} };
    expect(serviceAnswers(JSON.stringify(service))).toMatchObject({
      movedFromEnode: 'enode://abc@190.51.100.7:60606',
      ingress: [],
    });
  });

  it('no annotations: nothing recorded', () => {
    const service = JSON.parse(SERVICE);
    delete service.metadata.annotations;
    expect(serviceAnswers(JSON.stringify(service)).recordedEnode).toBe('');
  });

  it('what is not a Service is refused', () => {
    expect(() => serviceAnswers(POD)).toThrow('not a Service');
  });
});
