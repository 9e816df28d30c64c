/**
 * What `npm run init` accepts, and its help: one flag per question of the guided setup, each with its meaning (the
 * fields' meanings come from the settings schema, where they live once).
 */
import { KUBERNETES_QUESTIONS, NODE_NAME_QUESTION, questionMeaning, SSH_QUESTIONS } from '../../core/init/questions';
import type { OptionSpec, ToolSpec } from '../cli';

/** The options of `npm run init`. */
export type InitOptions = Record<string, OptionSpec & { type: 'string' }>;

/** A flag of a field question: the setting it answers and its meaning. */
function fieldOption(question: (typeof SSH_QUESTIONS)[number]): [string, OptionSpec & { type: 'string' }] {
  return [question.flag, { type: 'string', value: 'VALUE', help: `${question.key}: ${questionMeaning(question)}` }];
}

const FIELD_OPTIONS = Object.fromEntries(
  [NODE_NAME_QUESTION, ...KUBERNETES_QUESTIONS, ...SSH_QUESTIONS].map(fieldOption),
) as InitOptions;

/** What `npm run init` is, for its help and its errors. */
export const INIT_TOOL: ToolSpec<InitOptions> = {
  command: 'npm run init --',
  usage: '--stack <testnet|mainnet> [options]',
  summary:
    'The guided setup: asks for the node type, the target (kubernetes or ssh) and its fields, checks each answer\n' +
    "with the program's own rules, writes Pulumi.<stack>.yaml (and a Kubernetes node's values file), offers to\n" +
    "create the node key and store it as a stack secret, and ends with the node's enode and address and what is\n" +
    'left to do. Every question has a flag; without a terminal the flags must answer every required question.',
  options: {
    stack: { type: 'string', value: '<testnet|mainnet>', help: 'the stack to add the node to (required)' },
    typenode: { type: 'string', value: 'TYPE', help: 'the node type: 0 validator, 1 boot, 2 writer' },
    network: { type: 'string', value: 'INDEX', help: "the network: 0 mainnet-omega, 1 open-protestnet (the stack's)" },
    target: { type: 'string', value: '<kubernetes|ssh>', help: 'where the node runs' },
    context: { type: 'string', value: 'NAME', help: 'the kubectl context whose workers to list' },
    keygen: { type: 'string', value: '<yes|no>', help: 'create the node key now' },
    'store-secret': { type: 'string', value: '<yes|no>', help: 'store the key as a stack secret now (runs pulumi)' },
    dir: { type: 'string', value: 'DIR', help: 'the project folder to write into (default: here)' },
    'key-dir': { type: 'string', value: 'DIR', help: 'where to write the key (outside any repository)' },
    ...FIELD_OPTIONS,
  },
  examples: [
    ['--stack testnet', 'answer the questions on the terminal'],
    [
      '--stack testnet --typenode 0 --network 1 --target ssh --host 198.51.100.7 --node-name org-validator ' +
        '--node-email ops@example.org --user ubuntu --keygen yes --store-secret no',
      'an SSH validator on testnet, every answer from the flags',
    ],
  ],
  exitCodes: '0 written, 2 a wrong answer or flag (nothing written).',
};
