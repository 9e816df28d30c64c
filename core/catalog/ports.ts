/**
 * Ports and addresses a node uses, on both deployment paths.
 */
export const PORTS = {
  /** Peer-to-peer, TCP and UDP (discovery). */
  p2p: 60606,
  /** JSON-RPC over HTTP. */
  rpcHttp: 4545,
  /** JSON-RPC over WebSocket (off by default). */
  rpcWs: 4546,
  /** GraphQL over HTTP (off by default). */
  graphqlHttp: 4547,
  /** The writer's reverse proxy (gas-model entry point). */
  reverseProxyHttp: 80,
  /** RPC over TLS through the reverse proxy (SSH path). */
  reverseProxyHttps: 443,
  /** The writer's relay signer, behind the reverse proxy. */
  relaySigner: 9001,
  /** Lowest and highest port an operator may choose. */
  min: 1,
  max: 65535,
} as const;

/** The address the node binds to for p2p and RPC inside its host or pod. */
export const BIND_ALL = '0.0.0.0';

/** Host names Besu's host allowlist always accepts, so local tools and health probes keep working. */
export const LOCAL_HOSTS = ['localhost', '127.0.0.1'] as const;

/** The loopback address: Besu's RPC binds here when only the local reverse proxy may reach it. */
export const LOOPBACK = '127.0.0.1';
