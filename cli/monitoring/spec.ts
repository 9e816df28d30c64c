/** The options and help of `npm run monitoring` (cli/monitoring.ts). */
import type { ToolSpec } from '../cli';
import { DEFAULT_MONITORING_FOLDER, STACK_MONITORING_FILES } from '../../core/catalog/metrics';

export const MONITORING_TOOL = {
  command: 'npm run --silent monitoring --',
  usage: '--stack <testnet|mainnet> [--out DIR] [--token-file FILE] [--outputs FILE] [--config FILE]',
  summary:
    "Writes your Prometheus's files for the nodes of a stack, from the stack's settings: the scrape configuration of\n" +
    "its machines (each node's port 9443 over TLS, its own certificate, the bearer token read from a file), the scrape\n" +
    'job of its cluster nodes by their annotations (with the Prometheus Operator, their ServiceMonitor and\n' +
    'PrometheusRule do it: nothing to write), and the alert rules beside them. Says what it wrote, one line per file,\n' +
    'how each node is scraped, and what is still to do, each with its command (the token, the certificates to save).\n' +
    'Run it again after a change of the settings, and after saving the certificates: it checks them.',
  options: {
    stack: { type: 'string', value: '<testnet|mainnet>', help: 'the stack whose nodes are scraped (required)' },
    out: {
      type: 'string',
      value: 'DIR',
      help: `the folder to write into (default ${DEFAULT_MONITORING_FOLDER}/<stack>, outside any repository)`,
    },
    'token-file': {
      type: 'string',
      value: 'FILE',
      help: `the file holding lacchain:metricsToken that Prometheus reads (default DIR/${STACK_MONITORING_FILES.token})`,
    },
    outputs: {
      type: 'string',
      value: 'FILE',
      help: "the nodes' outputs (pulumi stack output nodes --json > FILE), to check each certificate's fingerprint",
    },
    config: { type: 'string', value: 'FILE', help: 'the stack file to read (default Pulumi.<stack>.yaml)' },
  },
  examples: [
    ['--stack testnet', `writes the files into ${DEFAULT_MONITORING_FOLDER}/testnet/ and says what is still to do`],
    [
      '--stack mainnet --out /etc/prometheus/lacchain --token-file /etc/prometheus/lacchain-token --outputs nodes.json',
      "into Prometheus's own folder, the saved certificates checked against the nodes' outputs",
    ],
  ],
  exitCodes: "0 written, 1 nothing to write or a certificate that is not the node's, 2 usage or settings error",
} as const satisfies ToolSpec;
