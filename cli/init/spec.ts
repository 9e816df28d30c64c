/**
 * What `npm run init` accepts, and its help: one flag per question of the guided setup, each with its meaning (the
 * fields' meanings come from the settings schema, where they live once; `npm run docs` copies them into
 * fieldHelp.json, so that the help loads no schema).
 */
import type { OptionSpec, ToolSpec } from '../cli';
import FIELD_HELP from './fieldHelp.json';

/** The options of `npm run init`: one flag per question, and the switches. */
export type InitOptions = Record<string, OptionSpec>;

/** A flag of each field question: the setting it answers and its meaning. */
const FIELD_OPTIONS = Object.fromEntries(
  Object.entries(FIELD_HELP).map(([flag, help]) => [flag, { type: 'string', value: 'VALUE', help }]),
) as InitOptions;

/**
 * The machine of the help's examples: a private address, which open-protestnet takes as a node's (its peers may share
 * the network), so the examples run as printed; a documentation address (198.51.100.7) is refused as a node's.
 */
const EXAMPLE_HOST = '10.0.0.7';

/** What `npm run init` is, for its help and its errors. */
export const INIT_TOOL: ToolSpec<InitOptions> = {
  command: 'npm run --silent init --',
  usage: '--stack <testnet|mainnet> [options]',
  summary:
    'The guided setup: asks for the node type, the target (kubernetes or ssh) and its fields (the network is the\n' +
    "stack's), checks each answer with the program's own rules, writes Pulumi.<stack>.yaml (and a Kubernetes node's\n" +
    'own values file), makes or reuses the node key and offers to store it as a stack secret, and ends with the\n' +
    "node's enode and address and a numbered list of what is still to do, each with its command. An existing node\n" +
    'is replaced only when you say so (a re-run offers its current values). Every question has a flag; without a\n' +
    'terminal the flags must answer every required question (the host key may come later: it goes on the list).',
  options: {
    stack: { type: 'string', value: '<testnet|mainnet>', help: 'the stack to add the node to (required)' },
    typenode: {
      type: 'string',
      value: 'TYPE',
      help: 'the node type by name or index: validator (0), bootnode (1, or boot), writer (2)',
    },
    network: {
      type: 'string',
      value: 'INDEX|NAME',
      help: "checked against the stack's network: 0 mainnet-omega, 1 open-protestnet (never asked: the stack decides)",
    },
    target: { type: 'string', value: '<kubernetes|ssh>', help: 'where the node runs' },
    context: { type: 'string', value: 'NAME', help: 'the kubectl context whose workers to list' },
    'key-custody': {
      type: 'string',
      value: '<stack|machine>',
      help: "where an SSH node's key lives: stack (default: the stack's state, the enode known now) or machine (made on the machine, never leaving it; docs/security.md#key-custody)",
    },
    keygen: { type: 'string', value: '<yes|no>', help: 'create the node key now (key custody stack)' },
    'store-secret': { type: 'string', value: '<yes|no>', help: 'store the key as a stack secret now (runs pulumi)' },
    dir: { type: 'string', value: 'DIR', help: 'the project folder to write into (default: here)' },
    'key-dir': { type: 'string', value: 'DIR', help: 'where to write the key (outside any repository)' },
    remove: {
      type: 'string',
      value: 'NAME',
      help: 'remove node NAME from the stack file (nothing else asked; its values file and key file are kept)',
    },
    replace: {
      type: 'boolean',
      help: 'replace the node of that name if the stack has one (its current values are the defaults)',
    },
    ...FIELD_OPTIONS,
    'accept-any-host-key': {
      type: 'boolean',
      help: 'test networks only (refused on mainnet): connect without a pinned host_key (accept_any_host_key)',
    },
    'host-key-fingerprint': {
      type: 'string',
      value: 'SHA256:…',
      help: "the SHA-256 fingerprint of the machine's host key as you know it (ssh-keygen -lf on its console): init reads the key itself (ssh-keyscan to --host only) and writes it only when it matches",
    },
    'read-image-digest': {
      type: 'string',
      value: '<yes|no>',
      help: "read the monitoring client's image digest now with podman or docker here (image inspect, pulled first when not here) and write it (lacchain:companions.ethstats.imageDigest: required on mainnet; a test network runs the tag without it, flagged). Asked on a terminal; default no without one",
    },
    'ssh-key': {
      type: 'string',
      value: 'FILE',
      help: "the private key to read an SSH machine's system with, when os is not given and its host key is pinned (default: ssh's own)",
    },
  },
  examples: [
    ['--stack testnet', 'answer the questions on the terminal'],
    [
      `--stack testnet --typenode 0 --network 1 --target ssh --host ${EXAMPLE_HOST} --node-name org-validator ` +
        '--node-email ops@example.org --user ubuntu --keygen yes --store-secret no',
      'an SSH validator on testnet, every answer from the flags; the host key and digests go on the list',
    ],
    [
      '--stack testnet --name validator --replace --keygen yes --store-secret no ' +
        `--host-key "$(ssh-keyscan -t ed25519 ${EXAMPLE_HOST})"`,
      'the same node again, with its host key: its current values are the defaults, its key is reused',
    ],
    ['--stack testnet --remove validator', 'remove node validator from the stack file: pulumi up no longer deploys it'],
  ],
  exitCodes: '0 written (with what is still to do listed), 2 a wrong answer or flag (nothing written).',
};
