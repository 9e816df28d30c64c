/**
 * What both node components do with their arguments, written as a one-node stack: read them as a stack file is read
 * (nodeSettings.ts), then declare the one node with program.ts's declareStack,
 * as `pulumi up` of a stack file declares each of its nodes, under the component and on the operator's own cluster,
 * with the network's genesis downloaded (or read from `genesisFile`) and checked against its pinned digest.
 */
import * as pulumi from '@pulumi/pulumi';
import { GenesisError, loadGenesis } from '../core/genesis';
import { secretInputs } from '../components/pulumiSettings';
import { stopRun } from '../components/runStop';
import { declareStack, DeclareOptions, NodeOutputs } from '../program';
import { loadNodeSettings, NodeRequest } from './nodeSettings';

/** Reads the component's request (every problem reported at once) and declares its one node; its outputs. */
export function declareNode(request: NodeRequest, options: DeclareOptions): NodeOutputs {
  const loaded = loadNodeSettings(request);
  const { settings } = loaded;
  const genesis = () =>
    loadGenesis(settings.network.genesis, { file: settings.genesisFile }).catch((error: unknown) => {
      throw error instanceof GenesisError ? stopRun(error.message) : error;
    });
  const [node] = settings.nodes;
  return declareStack(settings, secretInputs(loaded), { genesis }, options).nodes[node.name];
}

/**
 * One output of the node declared inside `declared` (an output: the node is declared once the values the cloud makes
 * are known). Public: the node's identity and what it serves are no secret, even when its arguments held one.
 */
export function nodeOutput<K extends keyof NodeOutputs>(
  declared: pulumi.Output<NodeOutputs>,
  key: K,
): pulumi.Output<pulumi.Unwrap<NodeOutputs[K]>> {
  const value = declared.apply((outputs) => pulumi.output(outputs[key] as pulumi.Input<unknown>));
  return pulumi.unsecret(value) as pulumi.Output<pulumi.Unwrap<NodeOutputs[K]>>;
}
