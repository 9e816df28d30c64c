/**
 * A pod's port on this machine's loopback through `kubectl port-forward`, as an operator gives `npm run node` a node's
 * RPC (docs/operations.md), kept across the pod's restarts: kubectl ends when the pod it forwards to goes (a restart
 * deletes it), and is started again on the same local port until the forward is stopped. kubectl is started once
 * the pod runs (read over HTTPS, apiReads.ts): before, it would only say so and end, one process each half second
 * while a test moves the node (114 in one clusterMoveCuts run).
 */
import { ChildProcess, spawn } from 'child_process';
import * as net from 'net';
import * as path from 'path';
import { apiField } from './apiReads';
import type { TestCluster } from './cluster';

/** How long to wait before starting kubectl again (its pod not yet there, or not yet running). */
const RESTART_MS = 500;
/** How long the first forward may take to listen. */
const FIRST_LISTEN_MS = 30_000;

/** A forwarded port: its URL on the loopback, and how to stop it. */
export interface PortForward {
  /** `http://127.0.0.1:<local port>/`. */
  url: string;
  stop(): void;
}

/** A free TCP port on the loopback, as the system gives one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Forwards `port` of pod `pod` in `namespace` to the loopback, until stopped; resolves once it first listens. */
export async function keptPortForward(
  cluster: TestCluster,
  namespace: string,
  pod: string,
  port: number,
): Promise<PortForward> {
  const local = await freePort();
  let stopped = false;
  let child: ChildProcess | undefined;
  let listening: () => void = () => undefined;
  const firstListen = new Promise<void>((resolve) => (listening = resolve));
  const start = async () => {
    if (stopped) return;
    const phase = await apiField(cluster.kubeconfig, { kind: 'pod', name: pod, namespace }, '{.status.phase}');
    if (phase !== 'Running') {
      setTimeout(start, RESTART_MS);
      return;
    }
    if (stopped) return;
    child = spawn(
      path.join(cluster.binDir, 'kubectl'),
      ['--kubeconfig', cluster.kubeconfig, 'port-forward', '-n', namespace, `pod/${pod}`, `${local}:${port}`],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    child.stdout!.on('data', (data) => {
      if (String(data).includes('Forwarding from')) listening();
    });
    child.on('exit', () => setTimeout(start, RESTART_MS));
  };
  void start();
  const forward = {
    url: `http://127.0.0.1:${local}/`,
    stop() {
      stopped = true;
      child?.kill();
    },
  };
  const timedOut = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`kubectl port-forward to ${pod} did not listen`)), FIRST_LISTEN_MS).unref(),
  );
  await Promise.race([firstListen, timedOut]).catch((error) => {
    forward.stop();
    throw error;
  });
  return forward;
}
