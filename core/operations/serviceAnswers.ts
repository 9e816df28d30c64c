/**
 * What one read of a node's Service (`kubectl get service NAME -o json`) answers of `npm run node`'s questions: the
 * enode the program recorded on it, the enode the node had before it moved into the cluster, and the addresses the
 * cloud gave it. Read once for all the questions of one look at the node (status, check's observations) instead of one
 * kubectl run each. Pure: kubectl's JSON in, answers out.
 */
import { IDENTITY_ANNOTATIONS } from '../catalog/kubernetes';
import { MOVED_FROM_ENODE_ANNOTATION } from '../catalog/move';
import type { ServiceIngress } from '../kubernetes/loadBalancer';

/** The Service's answers; an annotation is empty when the Service has none. */
export interface ServiceAnswers {
  /** The enode the program recorded (IDENTITY_ANNOTATIONS.enode). */
  recordedEnode: string;
  /** The enode the node had on its machine before it moved into the cluster (MOVED_FROM_ENODE_ANNOTATION). */
  movedFromEnode: string;
  /** What the cloud gave the Service (`status.loadBalancer.ingress`): none before it gave anything. */
  ingress: ServiceIngress[];
}

/** The part of a Service object the answers come from. */
interface ServiceObject {
  kind?: unknown;
  metadata?: { annotations?: Record<string, unknown> };
  status?: { loadBalancer?: { ingress?: unknown } };
}

/** The answers of `json`, kubectl's JSON of the node's Service; throws when it is not a Service's JSON. */
export function serviceAnswers(json: string): ServiceAnswers {
  const service = JSON.parse(json) as ServiceObject | null;
  if (service === null || typeof service !== 'object' || service.kind !== 'Service') throw new Error('not a Service');
  const annotations = service.metadata?.annotations ?? {};
  const annotation = (name: string) => (typeof annotations[name] === 'string' ? annotations[name] : '');
  const ingress = service.status?.loadBalancer?.ingress;
  return {
    recordedEnode: annotation(IDENTITY_ANNOTATIONS.enode),
    movedFromEnode: annotation(MOVED_FROM_ENODE_ANNOTATION),
    ingress: Array.isArray(ingress) ? (ingress as ServiceIngress[]) : [],
  };
}
