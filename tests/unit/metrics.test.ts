/**
 * A machine's metrics: Besu serving them on the loopback (a pod's too), the relay's unit, and, with
 * `lacchain:metricsToken`, the TLS endpoint on 9443 to the bearer token only (the proxy's server, the firewall, the
 * node's reachableFromOutside, the node-key step's secret).
 */
import { parse as parseToml } from 'smol-toml';
import { METRICS } from '../../core/catalog/metrics';
import { describeNode } from '../../core/node/description';
import { reachableFromOutside } from '../../core/node/exposure';
import { metricsRelayUnit, metricsTokenCheckFile } from '../../core/remote/metricsRelay';
import { metricsPushUrl } from '../../core/node/metrics';
import { METRICS_TOKEN_PARAMETER, remoteSteps } from '../../core/remote/steps';
import type { SshNodeSettings } from '../../core/settings/model';
import { SettingsError } from '../../core/settings/problems';
import { loadTestnet, validTestnetConfig } from '../../testing/fixtures';

const TOKEN = 'a'.repeat(40);
const load = (extra: Record<string, unknown> = {}) => loadTestnet({ ...validTestnetConfig(), ...extra });
const machineOf = (extra: Record<string, unknown> = {}) =>
  load(extra).nodes.find((n) => n.target === 'ssh') as SshNodeSettings;
const values = { genesis: '{}', genesisSha256: 'x', enode: 'enode://x', address: '0x' };
const stepOf = (node: SshNodeSettings, name: string) =>
  remoteSteps(describeNode(node), values).find((s) => s.name === name)!;

describe("a machine's metrics", () => {
  it('Besu serves them on the loopback for the relay, on a machine as in a pod: it never pushes them itself', () => {
    const stack = load();
    for (const node of stack.nodes) {
      const served = parseToml(describeNode(node).files.configToml);
      expect([served['metrics-enabled'], served['metrics-host'], served['metrics-port']]).toEqual([
        true,
        '127.0.0.1',
        METRICS.besuPort,
      ]);
      expect(served['metrics-push-enabled']).toBeUndefined();
    }
  });

  it("the relay pushes to the network's gateway as the node's job, started and stopped with Besu", () => {
    const node = machineOf();
    expect(metricsPushUrl(node)).toBe(`http://${node.network.metricsPushHost}:9091/metrics/job/${node.nodeName}`);
    const unit = metricsRelayUnit(node, 'besu');
    expect(unit).toContain(`PartOf=${node.serviceName}.service`);
    expect(unit).toContain(`WantedBy=${node.serviceName}.service`);
    expect(unit).toContain('User=besu');
    expect(unit).toContain(`Environment=PUSH_URL=${metricsPushUrl(node)}`);
    expect(unit).toContain(`Environment=BESU_METRICS_URL=http://127.0.0.1:${METRICS.besuPort}/metrics`);
    expect(unit).toMatch(new RegExp(`^Environment="UNITS=${node.serviceName} ${node.serviceName}-`, 'm'));
    expect(stepOf(node, 'node-files').env.METRICS_RELAY_UNIT).toBe(unit);
  });

  it('without lacchain:metricsToken nothing of them is reachable from outside', () => {
    const node = machineOf();
    expect(node.metricsEndpoint).toBe(false);
    const description = describeNode(node);
    expect(description.files.proxyConfig).not.toContain(`${METRICS.endpointPort}`);
    expect(Object.keys(reachableFromOutside(description))).not.toContain(`${METRICS.endpointPort}/tcp`);
    expect(String(stepOf(node, 'firewall').env.TCP_PORTS).split(' ')).not.toContain(`${METRICS.endpointPort}`);
    expect(stepOf(node, 'node-key').env.METRICS_TOKEN_CHECK_FILE).toBeUndefined();
    // The token check an earlier endpoint left (it holds the former token) is removed by the proxy step.
    expect(stepOf(node, 'proxy').env.STALE_TOKEN_CHECK_FILE).toBe(metricsTokenCheckFile(node));
  });

  it('with it, a TLS endpoint on 9443 to the bearer token only; the token only in the node-key step', () => {
    const node = machineOf({ 'lacchain:metricsToken': { secure: TOKEN } });
    expect(node.metricsEndpoint).toBe(true);
    const description = describeNode(node);
    const site = description.files.proxyConfig!;
    const server = site.slice(
      site.indexOf("# The machine's metrics"),
      site.indexOf('}\n', site.indexOf('location / { return 404; }')),
    );
    expect(server).toContain(`listen ${METRICS.endpointPort} ssl;`);
    expect(server).toContain(`include ${metricsTokenCheckFile(node)};`);
    expect(server).toMatch(
      /location = \/metrics \{\n +limit_except GET \{ deny all; \}\n +proxy_pass http:\/\/127\.0\.0\.1:9545;/,
    );
    expect(server).toContain('proxy_set_header Authorization "";');
    expect(server).toContain(`alias /run/${node.serviceName}-metrics/machine.prom;`);
    expect(site).not.toContain(TOKEN);
    expect(reachableFromOutside(description)[`${METRICS.endpointPort}/tcp`]).toMatch(/bearer token/);
    expect(String(stepOf(node, 'firewall').env.TCP_PORTS).split(' ')).toContain(`${METRICS.endpointPort}`);
    const key = stepOf(node, 'node-key');
    expect(key.env.METRICS_TOKEN_CHECK_FILE).toBe(metricsTokenCheckFile(node));
    expect(key.env[METRICS_TOKEN_PARAMETER]).toBeUndefined(); // a secret parameter, added by the program only
    expect(stepOf(node, 'proxy').env.STALE_TOKEN_CHECK_FILE).toBeUndefined();
    for (const step of remoteSteps(description, values)) expect(JSON.stringify(step.env)).not.toContain(TOKEN);
  });

  it('refuses a token that is short or could break out of its nginx string, naming the key', () => {
    for (const bad of ['short', `${'a'.repeat(40)}"; return 200; #`, `${'a'.repeat(40)} b`]) {
      expect(() => load({ 'lacchain:metricsToken': { secure: bad } })).toThrow(SettingsError);
      try {
        load({ 'lacchain:metricsToken': { secure: bad } });
      } catch (error) {
        expect((error as Error).message).toMatch(/lacchain:metricsToken.*allowed: a token of 32 to 256 characters/);
      }
    }
  });
});
