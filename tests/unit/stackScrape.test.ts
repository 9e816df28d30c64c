/**
 * The monitoring files of the operator's own stack (`npm run monitoring`, core/monitoring/stackScrape.ts): the scrape
 * configuration of its machines (each node's 9443 over TLS, its own certificate, the token from a file), the scrape
 * job of its cluster nodes by annotations (or the note that their ServiceMonitor does it), the rules beside them, and
 * what is still to do with the exact command: the token file, each certificate to fetch, checked against the node's
 * tlsCertificateSha256 output when it is given.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as os from 'os';
import { completedExample, writeProject } from '../../testing/examples';
import * as yaml from 'js-yaml';
import { alertRulesDocument } from '../../core/monitoring/alerts';
import {
  fingerprintsFromOutputs,
  stackScrape,
  StackScrapeInput,
  TokenFileState,
} from '../../core/monitoring/stackScrape';
import { loadStack } from '../../core/settings/load';
import type { StackSettings } from '../../core/settings/model';
import { readFileFromDisk, readStackConfigFile } from '../../core/settings/settingsFiles';
import { loadTestnet, sshValidatorEntry, sshValidatorStack, validTestnetConfig } from '../../testing/fixtures';

const PROJECT = path.resolve(__dirname, '../..');
/** A self-signed certificate naming 190.51.100.7, the validator's node_ip (its key was thrown away). */
const CERTIFICATE = fs.readFileSync(path.join(PROJECT, 'tests/fixtures/monitoring/validator.crt'), 'utf8');
const FINGERPRINT = 'C4:04:30:EB:DB:7B:B7:C8:63:C9:DB:79:A4:6D:E0:5B:FB:14:6B:BF:70:06:8A:2A:2F:29:E9:1A:52:49:F0:0C';
const DIR = '/home/you/.lacchain-besu-node/monitoring/testnet';
const FETCH =
  'openssl s_client -connect 190.51.100.7:9443 -showcerts </dev/null 2>/dev/null | openssl x509 > ' +
  `${DIR}/validator.crt`;

const settingsOf = (config: Record<string, unknown>): StackSettings => loadTestnet(config);
/** A testnet stack of the validator machine, with lacchain:metricsToken unless told. */
const machineStack = (token = true) =>
  settingsOf(sshValidatorStack(undefined, token ? { 'lacchain:metricsToken': 'a'.repeat(64) } : {}));
const scrape = (settings: StackSettings, given: Partial<StackScrapeInput> = {}, token: TokenFileState = 'ok') =>
  stackScrape({
    settings,
    dir: DIR,
    tokenFile: { configured: 'metrics-token', shown: `${DIR}/metrics-token`, state: token },
    certificates: {},
    ...given,
  });
const file = (result: ReturnType<typeof stackScrape>, name: string) => {
  const found = result.files.find((f) => f.name === name);
  if (!found) throw new Error(`no ${name} in ${result.files.map((f) => f.name).join(', ')}`);
  return found;
};

describe("a stack's machines", () => {
  it('are scraped on 9443 over TLS, each with its own certificate, under the jobs and labels the rules read', () => {
    const result = scrape(machineStack(), { certificates: { validator: CERTIFICATE } });
    const text = file(result, 'prometheus.yml').text;
    expect(text).toMatch(/^# Written by `npm run monitoring -- --stack testnet`/);
    const config = yaml.load(text) as Record<string, unknown>;
    expect(config).toEqual({
      global: { scrape_interval: '15s', evaluation_interval: '15s' },
      rule_files: ['alerts.yml'],
      scrape_configs: [
        ['lacchain-besu', '/metrics'],
        ['lacchain-node-exporter', '/metrics/machine'],
      ].map(([job, metricsPath]) => ({
        job_name: `${job}/testnet/validator`,
        scheme: 'https',
        metrics_path: metricsPath,
        authorization: { type: 'Bearer', credentials_file: 'metrics-token' },
        tls_config: { ca_file: 'validator.crt' },
        static_configs: [
          { targets: ['190.51.100.7:9443'], labels: { lacchain_stack: 'testnet', lacchain_node: 'validator' } },
        ],
        relabel_configs: [{ target_label: 'job', replacement: job }],
      })),
    });
    expect(yaml.load(file(result, 'alerts.yml').text)).toEqual(alertRulesDocument());
    expect(result.files.map((f) => f.name)).toEqual(['prometheus.yml', 'alerts.yml']);
    expect(result.problems).toEqual([]);
  });

  it('name the certificate to fetch with the exact command, and the token file to fill', () => {
    const result = scrape(machineStack(), {}, 'missing');
    expect(result.nodes).toEqual([expect.stringMatching(/^validator \(machine 190\.51\.100\.7\): .*still to fetch$/)]);
    expect(result.todo).toEqual([
      `put the metrics token in ${DIR}/metrics-token: (umask 077 && mkdir -p ${DIR} && pulumi config get lacchain:metricsToken --stack testnet > ${DIR}/metrics-token)`,
      `save validator's certificate: ${FETCH}, then run this again to check it (with --outputs, against its tlsCertificateSha256 output)`,
      `load them: prometheus --config.file=${DIR}/prometheus.yml, or merge their scrape_configs and rule_files into your Prometheus's configuration (monitoring/README.md)`,
    ]);
  });

  it("check a saved certificate against the node's tlsCertificateSha256 output", () => {
    const fine = scrape(machineStack(), {
      certificates: { validator: CERTIFICATE },
      fingerprints: { validator: FINGERPRINT.toLowerCase() },
    });
    expect(fine.problems).toEqual([]);
    expect(fine.nodes).toEqual([
      expect.stringContaining(`(SHA-256 ${FINGERPRINT}, as its tlsCertificateSha256 output)`),
    ]);
    expect(fine.todo.some((t) => t.includes('validator.crt'))).toBe(false);

    const other = `${'AB:'.repeat(31)}AB`;
    const wrong = scrape(machineStack(), {
      certificates: { validator: CERTIFICATE },
      fingerprints: { validator: other },
    });
    expect(wrong.problems).toEqual([
      `${DIR}/validator.crt: its SHA-256 fingerprint is ${FINGERPRINT}, but the node's tlsCertificateSha256 output is ${other}: ` +
        `not the node's certificate (another machine answered at 190.51.100.7?); remove it and save the node's again: ${FETCH}`,
    ]);
  });

  it('without the output, show the fingerprint to compare; refuse a file that is no certificate of the node', () => {
    const unchecked = scrape(machineStack(), { certificates: { validator: CERTIFICATE } });
    expect(unchecked.todo).toContainEqual(
      `check that validator.crt is validator's: its SHA-256 ${FINGERPRINT} must be the tlsCertificateSha256 of validator ` +
        'in pulumi stack output nodes --stack testnet --json (or run this again with --outputs FILE, that output saved)',
    );
    expect(scrape(machineStack(), { certificates: { validator: '' } }).problems).toEqual([
      expect.stringMatching(/validator\.crt: not a PEM certificate \(the fetch failed\?\); remove it/),
    ]);
    const elsewhere = settingsOf(
      sshValidatorStack(sshValidatorEntry({ host: '190.51.100.8', node_ip: '190.51.100.8' }), {
        'lacchain:metricsToken': 'a'.repeat(64),
      }),
    );
    expect(scrape(elsewhere, { certificates: { validator: CERTIFICATE } }).problems).toEqual([
      expect.stringContaining("validator.crt: it does not name the node's address 190.51.100.8"),
    ]);
  });

  it('say how to make the token and the endpoint when lacchain:metricsToken is not set, and write nothing', () => {
    const result = scrape(machineStack(false), {}, 'missing');
    expect(result.files).toEqual([]);
    expect(result.nodes).toEqual([
      'validator (machine 190.51.100.7): not scraped: lacchain:metricsToken is not set, so the machine serves no metrics',
    ]);
    expect(result.todo).toEqual([
      `give the machines a metrics endpoint (9443, TLS, the bearer token): (umask 077 && mkdir -p ${DIR} && openssl rand -hex 32 > ${DIR}/metrics-token) && ` +
        `pulumi config set --secret lacchain:metricsToken --stack testnet < ${DIR}/metrics-token, then pulumi up --stack testnet and run this again`,
    ]);
  });

  it('name a token file the operator chose as given, and warn when others can read it', () => {
    const result = stackScrape({
      settings: machineStack(),
      dir: DIR,
      tokenFile: {
        configured: '/etc/prometheus/lacchain token',
        shown: '/etc/prometheus/lacchain token',
        state: 'readable-by-others',
      },
      certificates: { validator: CERTIFICATE },
      fingerprints: { validator: FINGERPRINT },
    });
    expect(file(result, 'prometheus.yml').text).toContain('credentials_file: /etc/prometheus/lacchain token');
    expect(result.todo[0]).toBe(
      "/etc/prometheus/lacchain token holds the metrics token and other users can read it: chmod 600 '/etc/prometheus/lacchain token'",
    );
  });
});

describe("a stack's cluster nodes", () => {
  const clusterStack = (monitoring?: unknown) =>
    settingsOf({
      ...validTestnetConfig(),
      'lacchain:nodes': [{ name: 'writer', typenode: 'writer', target: 'kubernetes' }],
      ...(monitoring === undefined ? {} : { 'lacchain:monitoring': monitoring }),
    });
  const SCRAPER = { namespace: 'monitoring', podLabels: { 'app.kubernetes.io/name': 'prometheus' } };

  it('without a scraper: not scraped, and the setting that changes it; nothing written', () => {
    const result = scrape(clusterStack());
    expect(result.files).toEqual([]);
    expect(result.nodes).toEqual([
      "writer (Kubernetes, namespace lacchain): not scraped: lacchain:monitoring.scraper is not set, so the pod's metrics port admits nobody",
    ]);
    expect(result.todo).toEqual([
      expect.stringMatching(
        /^let your cluster's Prometheus scrape the pods: set lacchain:monitoring in Pulumi\.testnet\.yaml/,
      ),
    ]);
  });

  it("by annotations: the job finds this stack's pods in its namespaces and labels them as the rules read", () => {
    const result = scrape(clusterStack({ scraper: SCRAPER }));
    expect(result.files.map((f) => f.name)).toEqual(['prometheus-kubernetes.yml', 'alerts.yml']);
    const config = yaml.load(file(result, 'prometheus-kubernetes.yml').text) as {
      scrape_configs: { job_name: string; kubernetes_sd_configs: unknown; relabel_configs: unknown[] }[];
    };
    const [job] = config.scrape_configs;
    expect(job.job_name).toBe('lacchain-besu');
    expect(job.kubernetes_sd_configs).toEqual([{ role: 'pod', namespaces: { names: ['lacchain'] } }]);
    expect(job.relabel_configs).toContainEqual({
      source_labels: ['__meta_kubernetes_pod_label_lacchain_net_stack'],
      regex: 'testnet',
      action: 'keep',
    });
    expect(result.nodes).toEqual([
      expect.stringContaining(
        'prometheus-kubernetes.yml, for the Prometheus in namespace monitoring whose pods have the labels app.kubernetes.io/name=prometheus',
      ),
    ]);
  });

  it('with the Prometheus Operator: its ServiceMonitor and PrometheusRule do it, nothing to write', () => {
    const result = scrape(
      clusterStack({ scraper: SCRAPER, prometheusOperator: true, resourceLabels: { release: 'kps' } }),
    );
    expect(result.files).toEqual([]);
    expect(result.nodes).toEqual([
      expect.stringContaining(
        'by its ServiceMonitor and PrometheusRule besu-node-writer (labels release=kps), which your Prometheus Operator picks up',
      ),
    ]);
    expect(result.todo).toEqual([]);
  });
});

describe('the example testnet stack', () => {
  it('has one Kubernetes writer without lacchain:monitoring: nothing to scrape, and how to change that', () => {
    const example = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-scrape-'));
    const file = writeProject('testnet', completedExample('testnet', { pin: false }), example);
    const { settings } = loadStack('testnet', readStackConfigFile(file), readFileFromDisk);
    fs.rmSync(example, { recursive: true, force: true });
    const result = scrape(settings);
    expect([result.files, result.nodes.length, result.todo.length]).toEqual([[], 1, 1]);
  });
});

describe("the nodes' outputs", () => {
  it('give each machine its tlsCertificateSha256, from the nodes output or the whole stack output', () => {
    const nodes = {
      validator: { tlsCertificateSha256: FINGERPRINT, enode: 'enode://…' },
      writer: { enode: 'enode://…' },
    };
    expect(fingerprintsFromOutputs(JSON.stringify(nodes))).toEqual({ validator: FINGERPRINT });
    expect(fingerprintsFromOutputs(JSON.stringify({ network: 'open-protestnet', nodes }))).toEqual({
      validator: FINGERPRINT,
    });
    expect(() => fingerprintsFromOutputs('enode://')).toThrow(/not JSON: save it with pulumi stack output nodes/);
  });
});
