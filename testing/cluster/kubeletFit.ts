/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The one change the kubelet tests make to the program's objects: the CPU requests. The program requests the
 * network's minimum hardware for Besu (2 CPUs on open-protestnet), which a 2-core test machine's kubelet cannot admit
 * beside the pod's other containers (OutOfcpu). Each container's CPU request is lowered to KUBELET_TEST_CPU; memory,
 * limits and everything else stay as declared.
 */
import type { Manifest } from './manifests';

/** The CPU each container requests on the test worker. */
export const KUBELET_TEST_CPU = '50m';

/** `manifests` with every pod template's containers requesting KUBELET_TEST_CPU. */
export function withCpuRequestsThatFit(manifests: Manifest[]): Manifest[] {
  return manifests.map((manifest) => {
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
  });
}
