/**
 * The monitoring files of the operator's own stack (`npm run monitoring -- --stack <stack>`): from the stack's
 * settings, the scrape configuration of its machines (each node's 9443 over TLS, its own certificate as `ca_file`, the
 * bearer token from a file), the scrape job by annotations of its cluster nodes (or, with the Prometheus Operator,
 * what its ServiceMonitors and PrometheusRules already do), the alert rules beside them, and what is still to do, each
 * with its command: the token file, the certificates to fetch (checked against the stack's `tlsCertificateSha256`
 * output when it is given). Pure: settings and what the tool read in, files and lines out.
 */
import { X509Certificate } from 'crypto';
import * as yaml from 'js-yaml';
import { configKey } from '../catalog/defaults';
import { kubernetesNames } from '../catalog/kubernetes';
import { METRICS, STACK_MONITORING_FILES } from '../catalog/metrics';
import type { KubernetesNodeSettings, SshNodeSettings, StackSettings } from '../settings/model';
import { alertRulesDocument } from './alerts';
import { kubernetesPrometheusConfig, prometheusConfig, ScrapeTarget } from './prometheusConfig';

/** A machine's certificate, saved in the folder: `<node>.crt`. */
export const certificateFile = (node: string) => `${node}.crt`;

/** The state of the token file the configuration names. */
export type TokenFileState = 'missing' | 'empty' | 'readable-by-others' | 'ok';

/** What the tool read in for a stack. */
export interface StackScrapeInput {
  settings: StackSettings;
  /** The folder the files go to, as the commands shown name it. */
  dir: string;
  /** The token file: as the configuration names it (relative to `dir`, or absolute) and as the commands name it. */
  tokenFile: { configured: string; shown: string; state: TokenFileState };
  /** Each machine node's saved certificate (`<dir>/<node>.crt`), PEM text, when the file exists. */
  certificates: Readonly<Record<string, string | undefined>>;
  /** Each node's `tlsCertificateSha256` output, when the stack's outputs were given. */
  fingerprints?: Readonly<Record<string, string | undefined>>;
}

/** One file to write into the folder. */
export interface StackMonitoringFile {
  name: string;
  text: string;
  /** What it is, for the line saying it was written. */
  what: string;
}

/** The files, one line per node on how it is scraped, what is still to do, and what is wrong. */
export interface StackScrape {
  files: StackMonitoringFile[];
  nodes: string[];
  todo: string[];
  /** A saved certificate that is not the node's: the configuration must not trust it. */
  problems: string[];
}

/** A shell word: quoted unless it is plainly safe. */
const word = (text: string) => (/^[\w@%+=:,./~-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);

/**
 * A shell command that writes `producer`'s output to the token's file, kept from other users: its folder made first
 * (0700) and the file 0600, under umask 077 in a subshell, so the token is never readable by others, not even briefly.
 */
const privateFileCommand = (file: string, producer: string) =>
  `(umask 077 && mkdir -p ${word(dirname(file))} && ${producer} > ${word(file)})`;
/** The folder of a file's path (`.` for a bare name). */
const dirname = (file: string) => (file.includes('/') ? file.replace(/\/[^/]*$/, '') || '/' : '.');
const join = (dir: string, file: string) => `${dir.replace(/\/+$/, '')}/${file}`;

const header = (stack: string, lines: string[]) =>
  [
    `# Written by \`npm run monitoring -- --stack ${stack}\` from the stack's settings: run it again after a change of`,
    '# the settings, rather than editing this file. Paths are relative to this folder.',
    ...lines.map((line) => `# ${line}`),
  ].join('\n') + '\n';
const dump = (document: unknown) => yaml.dump(document, { lineWidth: -1, noRefs: true });

/** The command that saves a machine's certificate as the scrape's `ca_file`. */
export function fetchCertificateCommand(node: SshNodeSettings, file: string): string {
  return `openssl s_client -connect ${node.p2pHost}:${METRICS.endpointPort} -showcerts </dev/null 2>/dev/null | openssl x509 > ${word(file)}`;
}

/** A saved certificate checked: its fingerprint, and why it is not the node's (undefined when it may be). */
export function checkCertificate(
  pem: string,
  node: SshNodeSettings,
  expectedSha256: string | undefined,
): { fingerprint?: string; problem?: string } {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
  } catch {
    return { problem: 'not a PEM certificate (the fetch failed?)' };
  }
  const fingerprint = certificate.fingerprint256;
  if (expectedSha256 !== undefined && fingerprint.toUpperCase() !== expectedSha256.toUpperCase()) {
    return {
      fingerprint,
      problem: `its SHA-256 fingerprint is ${fingerprint}, but the node's tlsCertificateSha256 output is ${expectedSha256}: not the node's certificate (another machine answered at ${node.p2pHost}?)`,
    };
  }
  if (certificate.checkIP(node.p2pHost) === undefined) {
    return { fingerprint, problem: `it does not name the node's address ${node.p2pHost} (not the node's certificate)` };
  }
  return { fingerprint };
}

/** The scrape configuration and what is still to do for a stack's nodes. */
export function stackScrape(input: StackScrapeInput): StackScrape {
  const { settings, dir, tokenFile } = input;
  const stack = settings.stack;
  const nodes: string[] = [];
  const todo: string[] = [];
  const problems: string[] = [];
  const files: StackMonitoringFile[] = [];
  const machines = settings.nodes.filter((n): n is SshNodeSettings => n.target === 'ssh');
  const clusterNodes = settings.nodes.filter((n): n is KubernetesNodeSettings => n.target === 'kubernetes');

  // Machines: each one's 9443, with the stack's token and the machine's own certificate.
  const scraped = machines.filter((n) => n.metricsEndpoint);
  const tokenKey = configKey('metricsToken');
  if (machines.length > 0 && scraped.length === 0) {
    todo.push(
      `give the machines a metrics endpoint (9443, TLS, the bearer token): ${privateFileCommand(tokenFile.shown, 'openssl rand -hex 32')} && ` +
        `pulumi config set --secret ${tokenKey} --stack ${stack} < ${word(tokenFile.shown)}, then pulumi up --stack ${stack} ` +
        'and run this again',
    );
  }
  const targets: ScrapeTarget[] = [];
  /** The certificates to fetch or check: after the token, which the scrape needs first. */
  const certificateTodo: string[] = [];
  for (const node of machines) {
    const where = `${node.name} (machine ${node.p2pHost})`;
    if (!node.metricsEndpoint) {
      nodes.push(`${where}: not scraped: ${tokenKey} is not set, so the machine serves no metrics`);
      continue;
    }
    const file = certificateFile(node.name);
    const shownFile = join(dir, file);
    targets.push({
      target: `${node.p2pHost}:${METRICS.endpointPort}`,
      tokenFile: tokenFile.configured,
      caFile: file,
      stack,
      node: node.name,
    });
    const expected = input.fingerprints?.[node.name];
    const pem = input.certificates[node.name];
    const scrapedAt = `${where}: ${STACK_MONITORING_FILES.machines}, https://${node.p2pHost}:${METRICS.endpointPort}${METRICS.besuPath} and ${METRICS.machinePath}`;
    if (pem === undefined) {
      nodes.push(`${scrapedAt}, its certificate ${file} still to fetch`);
      certificateTodo.push(
        `save ${node.name}'s certificate: ${fetchCertificateCommand(node, shownFile)}, then run this again to check it` +
          (expected === undefined
            ? ` (with --outputs, against its tlsCertificateSha256 output)`
            : ` against its tlsCertificateSha256 output ${expected}`),
      );
      continue;
    }
    const checked = checkCertificate(pem, node, expected);
    if (checked.problem) {
      problems.push(
        `${shownFile}: ${checked.problem}; remove it and save the node's again: ${fetchCertificateCommand(node, shownFile)}`,
      );
      nodes.push(`${scrapedAt}, its certificate ${file} refused`);
    } else if (expected !== undefined) {
      nodes.push(`${scrapedAt}, its certificate ${file} (SHA-256 ${checked.fingerprint}, as its tlsCertificateSha256 output)`);
    } else {
      nodes.push(`${scrapedAt}, its certificate ${file} (SHA-256 ${checked.fingerprint})`);
      certificateTodo.push(
        `check that ${file} is ${node.name}'s: its SHA-256 ${checked.fingerprint} must be the tlsCertificateSha256 of ` +
          `${node.name} in pulumi stack output nodes --stack ${stack} --json (or run this again with --outputs FILE, that output saved)`,
      );
    }
  }
  if (targets.length > 0) {
    if (tokenFile.state === 'missing' || tokenFile.state === 'empty') {
      todo.push(
        `put the metrics token in ${tokenFile.shown}: ${privateFileCommand(tokenFile.shown, `pulumi config get ${tokenKey} --stack ${stack}`)}`,
      );
    } else if (tokenFile.state === 'readable-by-others') {
      todo.push(`${tokenFile.shown} holds the metrics token and other users can read it: chmod 600 ${word(tokenFile.shown)}`);
    }
    todo.push(...certificateTodo);
    files.push({
      name: STACK_MONITORING_FILES.machines,
      what: `the scrape configuration of the machines ${targets.map((t) => t.node).join(', ')}`,
      text:
        header(stack, [
          `The machines of stack ${stack}: each one's Besu series (job lacchain-besu) and the machine's (job`,
          `lacchain-node-exporter) from its port ${METRICS.endpointPort} over TLS, with the bearer token of ${tokenKey} read`,
          `from ${tokenFile.configured} and the machine's own certificate as ca_file (<node>.crt).`,
        ]) + dump(prometheusConfig(targets, STACK_MONITORING_FILES.rules)),
    });
  }

  // Cluster nodes: by their ServiceMonitor and PrometheusRule, or by their annotations, or not at all.
  const byAnnotations: KubernetesNodeSettings[] = [];
  let unscraped = false;
  for (const node of clusterNodes) {
    const names = kubernetesNames(node.name);
    const where = `${node.name} (Kubernetes, namespace ${node.namespace})`;
    const { scraper, prometheusOperator, resourceLabels } = node.monitoring;
    if (!scraper) {
      unscraped = true;
      nodes.push(
        `${where}: not scraped: ${configKey('monitoring')}.scraper is not set, so the pod's metrics port admits nobody`,
      );
    } else if (prometheusOperator) {
      const labels = Object.entries(resourceLabels).map(([k, v]) => `${k}=${v}`);
      nodes.push(
        `${where}: by its ServiceMonitor and PrometheusRule ${names.monitoring}` +
          `${labels.length > 0 ? ` (labels ${labels.join(', ')})` : ''}, which your Prometheus Operator picks up when its ` +
          'serviceMonitorSelector and ruleSelector match them: nothing to write ' +
          `(kubectl get servicemonitor,prometheusrule ${names.monitoring} -n ${node.namespace} shows them)`,
      );
    } else {
      byAnnotations.push(node);
      nodes.push(
        `${where}: ${STACK_MONITORING_FILES.cluster}, for the Prometheus in namespace ${scraper.namespace} whose pods ` +
          `have the labels ${Object.entries(scraper.podLabels)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')} (the only pods its NetworkPolicy admits to port ${METRICS.podPort})`,
      );
    }
  }
  if (unscraped) {
    todo.push(
      `let your cluster's Prometheus scrape the pods: set ${configKey('monitoring')} in ${settings.configFile} ` +
        '(scraper, and prometheusOperator: true with the Prometheus Operator; docs/monitoring.md, "Monitoring and alerts"), ' +
        `then pulumi up --stack ${stack} and run this again`,
    );
  }
  if (byAnnotations.length > 0) {
    const namespaces = [...new Set(byAnnotations.map((n) => n.namespace))];
    files.push({
      name: STACK_MONITORING_FILES.cluster,
      what: `the scrape job by annotations of the cluster nodes ${byAnnotations.map((n) => n.name).join(', ')}`,
      text:
        header(stack, [
          `The cluster nodes of stack ${stack}, for a Prometheus in the cluster without the Prometheus Operator: their pods`,
          `found by their prometheus.io annotations and stack label in ${namespaces.join(', ')}. Merge its scrape_configs into`,
          "your Prometheus's configuration; the disk and companion alerts read the kubelet's volume statistics and",
          'kube-state-metrics: scrape those too.',
        ]) + dump(kubernetesPrometheusConfig(STACK_MONITORING_FILES.rules, undefined, { stack, namespaces })),
    });
  }
  if (files.length > 0) {
    todo.push(
      `load them: ${targets.length > 0 ? `prometheus --config.file=${word(join(dir, STACK_MONITORING_FILES.machines))}, or ` : ''}` +
        `merge their scrape_configs and rule_files into your Prometheus's configuration (monitoring/README.md)`,
    );
    files.push({
      name: STACK_MONITORING_FILES.rules,
      what: 'the alert rules (as monitoring/alerts.yml)',
      text: header(stack, ['The alert rules, as monitoring/alerts.yml.']) + dump(alertRulesDocument()),
    });
  }
  return { files, nodes, todo, problems };
}

/**
 * The nodes' `tlsCertificateSha256` from their outputs as `pulumi stack output nodes --json` prints them (or the whole
 * `pulumi stack output --json`); a mistake in the text is thrown as an Error naming what was expected.
 */
export function fingerprintsFromOutputs(text: string): Record<string, string | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('not JSON: save it with pulumi stack output nodes --stack <stack> --json > FILE');
  }
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(parsed)) throw new Error('not the nodes output: a JSON object of nodes was expected');
  const nodes = isObject(parsed.nodes) ? parsed.nodes : parsed;
  const fingerprints: Record<string, string | undefined> = {};
  for (const [name, outputs] of Object.entries(nodes)) {
    if (!isObject(outputs)) continue;
    const sha256 = outputs.tlsCertificateSha256;
    if (typeof sha256 === 'string') fingerprints[name] = sha256;
  }
  return fingerprints;
}
