/**
 * The network's monitoring, stood in for a test host: the ethstats-cli stand-in packed as an image and served by a
 * test registry, the monitoring server's stand-in on the host's gateway, and podman made able to run inside the host.
 * What an end-to-end test needs to deploy a node with its monitoring client.
 */
import type { TestHost } from './host/testHost';
import { letPodmanRunInTestHost } from './host/podman';
import { EthstatsServer, startEthstatsServer } from './ethstatsServer';
import { ImageRegistry, startImageRegistry } from './imageRegistry';
import { buildEthstatsStandinImage } from './ociImage';

/** The running stand-ins, and the `lacchain:companions.ethstats` setting that points a node at them. */
export interface MonitoringStandins {
  registry: ImageRegistry;
  monitor: EthstatsServer;
  ethstats: { image: string; imageDigest: string; serverUrl: string };
  close(): Promise<void>;
}

/** Builds the image in `work` and starts the registry and the server for `host`. */
export async function startMonitoringStandins(host: TestHost, work: string): Promise<MonitoringStandins> {
  const image = await buildEthstatsStandinImage(work);
  const registry = await startImageRegistry(host, image.archive, 'lacchain/ethstats-cli-standin', work);
  const monitor = await startEthstatsServer(host.gateway);
  await letPodmanRunInTestHost(host);
  return {
    registry,
    monitor,
    ethstats: { image: registry.image, imageDigest: registry.digest, serverUrl: monitor.url },
    close: async () => {
      await registry.close();
      await monitor.close();
    },
  };
}
