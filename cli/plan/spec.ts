/** The options and help of `npm run plan` (cli/plan.ts). */
import type { ToolSpec } from '../cli';

/** The options of `npm run plan`, each with its meaning. */
export const PLAN_OPTIONS = {
  stack: { type: 'string', value: '<testnet|mainnet>', help: 'the stack to plan (required)' },
  out: { type: 'string', value: 'DIR', help: 'the folder the plan is written into (required)' },
  config: { type: 'string', value: 'FILE', help: 'the stack file to read (default Pulumi.<stack>.yaml)' },
  'node-key-file': {
    type: 'string',
    multiple: true,
    value: '[NODE=]FILE',
    help: "a node's key file, to show its enode and address (NODE=FILE when the stack has several nodes)",
  },
  'genesis-file': {
    type: 'string',
    value: 'FILE',
    help: "a local copy of the network's genesis (checked by digest), to plan with the real file",
  },
  diff: { type: 'string', value: 'BASE_DIR', help: "also show what changes from an earlier plan's folder" },
  'diff-ref': { type: 'string', value: 'REF', help: 'also show what changes from the same stack planned at a git ref' },
} as const;

export const PLAN_TOOL = {
  command: 'npm run --silent plan --',
  usage: '--stack <testnet|mainnet> --out DIR [options]',
  summary:
    'The offline plan: runs the program under a recording engine, without the Pulumi engine or any credentials,\n' +
    'writes what pulumi up would create (resources.json, kubernetes/<node>.yaml, remote/<node>/), checks it with\n' +
    'the policy rules (policy.json) and prints the stack outputs as JSON.',
  options: PLAN_OPTIONS,
  examples: [
    ['--stack testnet --out plan/', 'plan the testnet stack into plan/'],
    ['--stack mainnet --out plan/ --diff-ref origin/main', 'plan mainnet and show what changes from main'],
    [
      '--stack testnet --out plan/ --node-key-file writer=~/.lacchain-besu-node/keys/testnet-writer.key',
      "show the writer's enode",
    ],
  ],
  exitCodes:
    '0 planned and no policy violation, 1 a policy violation, 2 a mistake in the command line or the settings.',
} as const satisfies ToolSpec<typeof PLAN_OPTIONS>;
