/**
 * The Pulumi program: the nodes of the stack's file, declared through the package's own API (library/): read and
 * validate the stack's settings, obtain the verified genesis, then declare one component per node and export the
 * outputs. Bad settings or a genesis that is not the pinned one end the run before anything is declared. See
 * docs/settings.md for the settings and program.ts for what is declared.
 */
import { deployStackFile } from './library';

export = async () => {
  const outputs = await deployStackFile();
  return {
    /** The network the stack deploys to. */
    network: outputs.network,
    /** Per node: enode, address, permissioning request and where it runs. */
    nodes: outputs.nodes,
  };
};
