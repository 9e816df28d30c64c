// Types for aptProxy.js (plain CommonJS), so strict TypeScript tests can import it.
export interface AptProxyOptions {
  /** Bind address: a test host's gateway (10.231.N.1) or loopback. Never a wildcard. */
  host: string;
  port: number;
  /** Host names that may be relayed to (ports 80/443). Default: this machine's apt hosts. '*' = any. */
  allowHosts?: string[];
  log?: (line: string) => void;
}
export interface AptProxy {
  host: string;
  port: number;
  url: string;
  /** Number of requests served so far. */
  requests(): number;
  close(): Promise<void>;
}
export function startAptProxy(opts: AptProxyOptions): Promise<AptProxy>;
export function defaultAllowHosts(): string[];
