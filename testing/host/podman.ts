/**
 * What podman needs to run containers inside a test host, which is itself a container (systemd-nspawn on this
 * machine): its overlay storage cannot sit on the host's overlayfs root (vfs instead), the kernel keyring is closed
 * to it, and nspawn leaves it no cgroup controllers to make containers' cgroups in. A real machine needs none of
 * this: the product never writes these files, the tests write them before the packages step installs podman.
 */
import type { TestHost } from './testHost';

/** /etc/containers/storage.conf: vfs, in podman's usual places. */
const STORAGE_CONF = `[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
`;

/** /etc/containers/containers.conf: no session keyring, no cgroups of its own. */
const CONTAINERS_CONF = `[containers]
keyring = false
cgroups = "disabled"
`;

/** Writes podman's configuration for running inside the test host. */
export async function letPodmanRunInTestHost(host: TestHost): Promise<void> {
  const files = { '/etc/containers/storage.conf': STORAGE_CONF, '/etc/containers/containers.conf': CONTAINERS_CONF };
  for (const [file, text] of Object.entries(files)) {
    const written = await host.ssh(`mkdir -p /etc/containers && cat > ${file}`, { input: text });
    if (written.code !== 0) throw new Error(`cannot write ${file} on the test host: ${written.stderr}`);
  }
}
