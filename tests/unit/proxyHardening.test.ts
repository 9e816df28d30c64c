/**
 * The reverse proxy on both paths: no version in answers (server_tokens off) and, on TLS, TLS 1.2/1.3 with forward-secret
 * AEAD ciphers only. The restore of a refused site file is in scripts/remote/proxy.sh (shellcheck-clean, run on the
 * real host by the end-to-end tests).
 */
import * as fs from 'fs';
import * as path from 'path';
import { describeNode } from '../../core/node/description';
import { TLS_POLICY } from '../../core/catalog/remote';
import { loadTestnet, sshValidatorEntry, validTestnetConfig } from '../../testing/fixtures';
import { PROJECT_DIR } from '../../testing/run';

function nodes() {
  const config = validTestnetConfig();
  (config['lacchain:nodes'] as unknown[]).push({
    ...sshValidatorEntry({ host: '190.51.100.8', node_ip: '190.51.100.8' }),
    name: 'gateway',
    typenode: 'writer',
  });
  return loadTestnet(config).nodes;
}

describe('the proxy configuration', () => {
  it.each(['writer', 'gateway'])('%s: every server hides the nginx version', (name) => {
    const text = describeNode(nodes().find((n) => n.name === name)!).files.proxyConfig!;
    const servers = text.split('server {').length - 1;
    expect(servers).toBeGreaterThan(0);
    expect(text.split('server_tokens off;').length - 1).toBe(servers);
  });

  it('TLS servers allow only TLS 1.2/1.3 and forward-secret AEAD ciphers', () => {
    const text = describeNode(nodes().find((n) => n.name === 'gateway')!).files.proxyConfig!;
    expect(text).toContain(`ssl_protocols ${TLS_POLICY.protocols};`);
    expect(text).toContain(`ssl_ciphers ${TLS_POLICY.ciphers};`);
    for (const cipher of TLS_POLICY.ciphers.split(':')) expect(cipher).toMatch(/^ECDHE-.*(GCM|CHACHA20-POLY1305)/);
  });

  it('a site file nginx refuses is replaced by the previous one', () => {
    const script = fs.readFileSync(path.join(PROJECT_DIR, 'scripts/remote/proxy.sh'), 'utf8');
    expect(script).toMatch(/if ! check=\$\(nginx -t 2>&1\); then[\s\S]*mv -f "\$previous" "\$site"/);
  });
});
