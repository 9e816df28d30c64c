/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The one change the kubelet tests make to the program's objects: the CPU requests. The program requests the
 * network's minimum hardware for Besu (2 CPUs on open-protestnet), which a 2-core test machine's kubelet cannot admit
 * beside the pod's other containers (OutOfcpu). Each container's CPU request is lowered to KUBELET_TEST_CPU; memory,
 * limits and everything else stay as declared. The values file has no setting of the containers' resources: under
 * Pulumi's real engine, where the test applies nothing itself, the same change is a resource transform of the program's
 * run (registerCpuRequestsThatFit), made as the engine sends each object to the provider.
 */
import * as pulumi from '@pulumi/pulumi';
import type { Manifest } from './manifests';

/** The CPU each container requests on the test worker. */
export const KUBELET_TEST_CPU = '50m';

/** `manifests` with every pod template's containers requesting KUBELET_TEST_CPU. */
export function withCpuRequestsThatFit(manifests: Manifest[]): Manifest[] {
  return manifests.map(fitted);
}

/**
 * Registers, in a Pulumi program's run (its first statement), a transform that gives every resource with a pod template
 * the CPU requests of withCpuRequestsThatFit; every other resource, and everything else, as declared.
 */
export function registerCpuRequestsThatFit(): void {
  pulumi.runtime.registerResourceTransform((args) =>
    args.props.spec?.template?.spec ? { props: fitted(args.props as Manifest), opts: args.opts } : undefined,
  );
}

/** `manifest` with its pod template's containers (if it has one) requesting KUBELET_TEST_CPU. */
function fitted(manifest: Manifest): Manifest {
  const spec = manifest.spec?.template?.spec;
  if (!spec) return manifest;
  const fit = (containers: Record<string, any>[] = []) =>
    containers.map((c) =>
      c.resources?.requests?.cpu
        ? { ...c, resources: { ...c.resources, requests: { ...c.resources.requests, cpu: KUBELET_TEST_CPU } } }
        : c,
    );
  return {
    ...manifest,
    spec: {
      ...manifest.spec,
      template: {
        ...manifest.spec.template,
        spec: {
          ...spec,
          ...(spec.initContainers ? { initContainers: fit(spec.initContainers) } : {}),
          containers: fit(spec.containers),
        },
      },
    },
  };
}
