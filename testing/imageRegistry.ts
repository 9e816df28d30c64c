/**
 * A container registry for a test host, which has no route to any real one: the read-only part of the registry HTTP
 * API (v2) that `podman pull` uses, over HTTPS on the host's gateway with a certificate the host trusts, serving the
 * one image of an OCI image archive (testing/ociImage.ts) under the name `<gateway>:<port>/<repository>`. It records
 * each request, so a test can tell that the image was pulled, and by its digest.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as https from 'https';
import type { AddressInfo } from 'net';
import * as path from 'path';
import type { TestHost } from './host/testHost';
import { trustedCertificate } from './standinReleases';

/** A running test registry. */
export interface ImageRegistry {
  /** The image's name in it, for a setting: `<gateway>:<port>/<repository>`. */
  image: string;
  /** The image's manifest digest (`sha256:…`). */
  digest: string;
  /** The paths requested so far, in order. */
  requests(): string[];
  close(): Promise<void>;
}

/** Unpacks an OCI image archive into a new folder under `dir`. */
async function unpack(archive: string, dir: string): Promise<string> {
  const layout = fs.mkdtempSync(path.join(dir, '.oci-'));
  const code = await new Promise<number>((resolve) => {
    const child = spawn('tar', ['-xf', archive, '-C', layout], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('close', (status) => resolve(status ?? 1));
  });
  if (code !== 0) throw new Error(`cannot unpack ${archive} (tar exit ${code})`);
  return layout;
}

/** Serves the image of `archive` (an OCI image layout in a tar) as `repository` to the test host. */
export async function startImageRegistry(
  host: TestHost,
  archive: string,
  repository: string,
  workDir: string,
): Promise<ImageRegistry> {
  if (!/^10\.231\.\d{1,3}\.1$/.test(host.gateway)) throw new Error(`not a test host gateway: ${host.gateway}`);
  const layout = await unpack(archive, workDir);
  const index = JSON.parse(fs.readFileSync(path.join(layout, 'index.json'), 'utf8'));
  const manifest = index.manifests[0] as { digest: string; mediaType: string };
  const blob = (digest: string) => path.join(layout, 'blobs', ...digest.split(':'));
  const seen: string[] = [];
  const server = https.createServer(await trustedCertificate(host, workDir), (req, res) => {
    const url = new URL(req.url ?? '/', 'https://registry');
    seen.push(url.pathname);
    const headers = { 'Docker-Distribution-API-Version': 'registry/2.0' };
    const send = (status: number, type: string, body: Buffer, digest?: string) => {
      res.writeHead(status, {
        ...headers,
        'Content-Type': type,
        'Content-Length': body.length,
        ...(digest ? { 'Docker-Content-Digest': digest } : {}),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const missing = () => send(404, 'application/json', Buffer.from('{"errors":[{"code":"NOT_FOUND"}]}'));
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', Buffer.from('read-only\n'));
    if (url.pathname === '/v2/') return send(200, 'application/json', Buffer.from('{}'));
    const match = /^\/v2\/(.+)\/(manifests|blobs)\/(sha256:[0-9a-f]{64})$/.exec(url.pathname);
    if (!match || match[1] !== repository || !fs.existsSync(blob(match[3]))) return missing();
    const [, , kind, digest] = match;
    if (kind === 'manifests' && digest !== manifest.digest) return missing();
    const type = kind === 'manifests' ? manifest.mediaType : 'application/octet-stream';
    return send(200, type, fs.readFileSync(blob(digest)), digest);
  });
  await new Promise<void>((resolve) => server.listen(0, host.gateway, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    image: `${host.gateway}:${port}/${repository}`,
    digest: manifest.digest,
    requests: () => [...seen],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
