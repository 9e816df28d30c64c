/**
 * The LACChain gas model as a writer's reverse proxy sees it: which JSON-RPC methods belong to the relay signer.
 */

/** The JSON-RPC methods a writer's proxy sends to the relay signer (`PORTS.relaySigner`); every other one goes to Besu. */
export const GAS_MODEL_METHODS = [
  'eth_sendRawTransaction',
  'eth_getTransactionReceipt',
  'eth_getTransactionCount',
  'eea_sendRawTransaction',
] as const;

/** The path the reference deployment serves the relay signer on, through the writer's proxy. */
export const RELAY_SIGNER_PATH = '/gas-relay-signer';
