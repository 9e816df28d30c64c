// Types for fileServer.js (plain CommonJS), so strict TypeScript tests can import it.
export interface FileServerOptions {
  /** Bind address: a test host's gateway (10.231.N.1) or loopback. Never a wildcard. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Directory to serve (files only, no listings, no escaping it). */
  root: string;
  log?: (line: string) => void;
  /** Serve HTTPS with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
  /** Paths answered with a 302 to the given location. */
  redirects?: Record<string, string>;
}
export interface FileServer {
  /** e.g. "http://10.231.1.1:8080" or "https://…" (no trailing slash). */
  url: string;
  port: number;
  /** Decoded paths requested so far, in order. */
  requests(): string[];
  close(): Promise<void>;
}
export function startFileServer(opts: FileServerOptions): Promise<FileServer>;
