/**
 * KubernetesNode: one Besu node on a cluster — the key Secret, the ConfigMap, the data volume, the NetworkPolicy of its
 * pod, the pinned one-replica StatefulSet and the LoadBalancer Service on the node's static IP; with the Prometheus
 * Operator, its metrics Service, ServiceMonitor and PrometheusRule. The manifests come from core/kubernetes.
 */
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { createHash } from 'crypto';
import { kubernetesNames } from '../core/catalog/kubernetes';
import { MOVE_HOLD_VARIABLE } from '../core/catalog/move';
import {
  configMapManifest,
  dataVolumeManifest,
  keySecretManifest,
  kubernetesRpcUrl,
  podConfig,
  rpcAuthSecretManifest,
  serviceManifest,
  statefulSetManifest,
} from '../core/kubernetes/manifests';
import { prometheusOperatorManifests } from '../core/kubernetes/monitoring';
import { networkPolicyManifest } from '../core/kubernetes/networkPolicy';
import { kubernetesNodeFiles } from '../core/kubernetes/nodeFiles';
import { configDigest, describeNode } from '../core/node/description';
import { sha256Hex } from '../core/genesis';
import type { KubernetesNodeSettings } from '../core/settings/model';
import { rpcCredentials } from './rpcCredentials';
import { checkedServiceAddress } from './serviceAddress';
import { backupPassword } from './backupPassword';
import type { NodeArgs } from './nodeArgs';
import {
  backupAccessManifests,
  backupCronJobManifest,
  backupScheduleConfigMapManifest,
  backupSecretManifest,
  backupVolumeManifest,
  usesSnapshots,
} from '../core/kubernetes/backups';

export interface KubernetesNodeArgs extends NodeArgs<KubernetesNodeSettings> {
  /** The node's enode and address (annotated on its Service). */
  enode: pulumi.Input<string>;
  address: pulumi.Input<string>;
  /** The provider of the stack's cluster. */
  provider: k8s.Provider;
  /** The node's namespace, declared once per namespace by the program. */
  namespace: k8s.core.v1.Namespace;
  /** Let `pulumi destroy` delete the key Secret. Default false: destroy leaves the Secret in the cluster. */
  allowKeyDeletion?: boolean;
  /**
   * The node before this one in the stack's rollout (core/node/rollout.ts), passed its gate: the StatefulSet, whose
   * change restarts the pod, waits for it.
   */
  rolloutAfter?: pulumi.Resource;
}

/**
 * A Besu node on Kubernetes.
 * @public (program.ts loads it with require, for stacks with Kubernetes nodes only)
 */
export class KubernetesNode extends pulumi.ComponentResource {
  /** The namespace of the node's objects. */
  readonly namespace: pulumi.Output<string>;
  /** The node's pod (`besu-node-<node>-0`). */
  readonly podName: pulumi.Output<string>;
  /** The Besu container (`<node>-besu`). */
  readonly containerName: pulumi.Output<string>;
  /** The JSON-RPC URL on the node's public IP. */
  readonly rpcUrl: pulumi.Output<string>;
  /**
   * The address the cloud gave the node's Service (its IP, or the DNS name that resolves to it), checked to be the
   * enode's IP after `pulumi up` (components/serviceAddress.ts); unknown in a preview of a new Service.
   */
  readonly loadBalancerAddress: pulumi.Output<string | undefined>;
  /**
   * What the next node of the rollout waits for: the StatefulSet, which the provider counts as changed only once its
   * pod runs the new revision and is Ready (the readiness probe: a peer, at most MAX_BLOCKS_BEHIND blocks behind).
   */
  readonly rolloutGate: pulumi.Resource;

  constructor(name: string, args: KubernetesNodeArgs, opts?: pulumi.ComponentResourceOptions) {
    super('lacchain:index:KubernetesNode', name, {}, opts);
    const { node } = args;
    const names = kubernetesNames(node.name);
    const child = { parent: this, provider: args.provider, dependsOn: [args.namespace] };
    const description = describeNode(node);
    const files = kubernetesNodeFiles(description, args.genesis);

    // The identity outlives the stack unless the operator allows its deletion: `pulumi destroy` forgets the Secret
    // and leaves it in the cluster. Not `protect`, which would make every destroy fail and delete nothing. With
    // `secret` custody the key is in the operator's own Secret, which the pod mounts and the program never touches.
    const secret =
      args.privateKey === undefined
        ? undefined
        : new k8s.core.v1.Secret(`${name}-key`, keySecretManifest(node, pulumi.secret(args.privateKey)), {
            ...child,
            retainOnDelete: !args.allowKeyDeletion,
            additionalSecretOutputs: ['data', 'stringData'],
          });
    // Immutable, named by its content (core/kubernetes/configCheck.ts): a change makes a new ConfigMap, which the
    // StatefulSet moves to in its turn; `pulumi up` deletes the old one last, once every StatefulSet has moved (a
    // replacement, created before the delete). An earlier node's change never reaches this pod early.
    // The digest covers the genesis the ConfigMap holds (verified against the network's pinned digest by the program).
    const config = pulumi.output(args.genesis).apply((text) => podConfig(node, files, sha256Hex(text)));
    const podConfigOf = { configMap: config.configMap, digest: config.digest };
    const configMap = new k8s.core.v1.ConfigMap(`${name}-config`, configMapManifest(node, files, podConfigOf), child);
    // Chain data is never lost by accident: `pulumi destroy` forgets the volume and leaves it in the cluster.
    const volume = new k8s.core.v1.PersistentVolumeClaim(`${name}-data`, dataVolumeManifest(node), {
      ...child,
      retainOnDelete: true,
    });
    // The pod rolls when anything it reads changes: Besu's files, the proxy's, the companions' configs.
    let checksum: pulumi.Input<string> = configDigest(
      description,
      [files.proxyConfig ?? '', files.metricsRelay, ...Object.values(files.companionConfigs ?? {})].join('\n'),
      node.network.genesis.sha256,
    );
    // The pod's NetworkPolicy comes first, so the pod never runs without it (and destroy removes it after the pod).
    const networkPolicy = new k8s.networking.v1.NetworkPolicy(
      `${name}-network-policy`,
      networkPolicyManifest(description),
      child,
    );
    // The backups' volume and password: the pod backs its data up there before a new release opens it.
    const backupVolume = new k8s.core.v1.PersistentVolumeClaim(`${name}-backups`, backupVolumeManifest(node), {
      ...child,
      retainOnDelete: true,
    });
    const password = backupPassword(args.backupPassword, args.privateKey);
    // The settings refuse a node whose key the stack does not hold without lacchain:backupPassword.
    if (password === undefined) throw new Error(`node ${node.name}: no backup password (lacchain:backupPassword)`);
    const backupSecret = new k8s.core.v1.Secret(`${name}-backup`, backupSecretManifest(node, password), {
      ...child,
      additionalSecretOutputs: ['data', 'stringData'],
    });
    const podInputs: pulumi.Resource[] = [
      args.namespace,
      ...(secret ? [secret] : []),
      configMap,
      volume,
      networkPolicy,
      backupVolume,
      backupSecret,
    ];
    const auth = description.rpc.authentication;
    if (auth?.method === 'password') {
      // The credentials (bcrypt hashes) are a Secret of their own, not protected: they change with the settings.
      const credentials = rpcCredentials(name, this, auth.users, args.rpcPasswords);
      podInputs.push(
        new k8s.core.v1.Secret(`${name}-rpc-auth`, rpcAuthSecretManifest(node, credentials), {
          ...child,
          additionalSecretOutputs: ['data', 'stringData'],
        }),
      );
      // A password change rolls the pod too (Besu reads the file at start). The annotation is public (it keeps the
      // StatefulSet's spec readable in previews and state), so it is made only from values that include the secret
      // random salts: the file's bcrypt hashes carry them. Without the salts (secret in the state) a guessed password
      // cannot be turned into this digest, so it lets no one check a password offline; the same salt and password
      // give the same digest, so an unchanged setting rolls nothing. The offline plan, whose salts only `pulumi up`
      // makes, shows it as known after pulumi up.
      const fixed = checksum;
      checksum = pulumi.unsecret(
        credentials.apply((text) => createHash('sha256').update(fixed).update(text).digest('hex')),
      );
    }
    const statefulSet = new k8s.apps.v1.StatefulSet(
      `${name}-node`,
      heldForMove(node.name, statefulSetManifest<pulumi.Input<string>>(description, checksum, podConfigOf)),
      {
        ...child,
        dependsOn: [...podInputs, ...(args.rolloutAfter ? [args.rolloutAfter] : [])],
      },
    );
    this.rolloutGate = statefulSet;
    if (node.backups.schedule !== 'off') scheduleBackups(name, node, { ...child, dependsOn: [statefulSet] });
    const service = new k8s.core.v1.Service(
      `${name}-service`,
      serviceManifest(description, { enode: args.enode, address: args.address }),
      {
        ...child,
        dependsOn: [args.namespace, statefulSet],
      },
    );

    const monitoring = prometheusOperatorManifests(node);
    if (monitoring) {
      // What the operator's Prometheus Operator reads: the metrics Service, its ServiceMonitor, the node's alerts.
      // After the pod, as the node's other Service: destroy removes them before it.
      const afterPod = { ...child, dependsOn: [args.namespace, statefulSet] };
      const metricsService = new k8s.core.v1.Service(`${name}-metrics`, monitoring.service, afterPod);
      new k8s.apiextensions.CustomResource(`${name}-service-monitor`, monitoring.serviceMonitor, {
        ...child,
        dependsOn: [args.namespace, metricsService],
      });
      new k8s.apiextensions.CustomResource(`${name}-alerts`, monitoring.prometheusRule, afterPod);
    }

    this.namespace = pulumi.output(node.namespace);
    this.podName = pulumi.output(names.pod);
    this.containerName = pulumi.output(names.besuContainer);
    this.rpcUrl = pulumi.output(kubernetesRpcUrl(node));
    // After `pulumi up`: the Service on the enode's IP, or the up fails naming the setting to fix.
    this.loadBalancerAddress = service.status.apply((status) => checkedServiceAddress(node, status));
    this.registerOutputs({
      loadBalancerAddress: this.loadBalancerAddress,
      namespace: this.namespace,
      podName: this.podName,
      containerName: this.containerName,
      rpcUrl: this.rpcUrl,
    });
  }
}

/** The scheduled backups of a node: the CronJob, the account and rights its pod has, and its snapshot's manifest. */
function scheduleBackups(name: string, node: KubernetesNodeSettings, options: pulumi.CustomResourceOptions): void {
  const access = backupAccessManifests(node);
  const account = new k8s.core.v1.ServiceAccount(`${name}-backup-account`, access.serviceAccount, options);
  const role = new k8s.rbac.v1.Role(`${name}-backup-role`, access.role, options);
  const binding = new k8s.rbac.v1.RoleBinding(`${name}-backup-binding`, access.roleBinding, {
    ...options,
    dependsOn: [account, role],
  });
  const inputs: pulumi.Resource[] = [binding];
  if (usesSnapshots(node)) {
    inputs.push(new k8s.core.v1.ConfigMap(`${name}-backup-snapshot`, backupScheduleConfigMapManifest(node), options));
  }
  new k8s.batch.v1.CronJob(`${name}-backup-schedule`, backupCronJobManifest(node), { ...options, dependsOn: inputs });
}

/**
 * The first `pulumi up` of a move into the cluster (`npm run node -- move`, MOVE_HOLD_VARIABLE naming the node) makes
 * the StatefulSet with no pod: the move fills the new data volume before the pod's first start, then runs `pulumi up`
 * again, which starts it. Any other run: the manifest as it is.
 */
function heldForMove<M extends { spec: object }>(node: string, manifest: M): M {
  if (process.env[MOVE_HOLD_VARIABLE] !== node) return manifest;
  return { ...manifest, spec: { ...manifest.spec, replicas: 0 } };
}
