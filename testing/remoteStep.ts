/**
 * The standard input of one remote step as the RemoteNode component sends it (its name among the parameters, the
 * steps' shared helpers, then its script), for the tests that run a step's script here.
 */
import { stepInput, stepScript } from '../core/remote/shell';
import { remoteStep, type RemoteStepName } from '../core/remote/steps';

/** The input of step `name` with parameters `env`, on a node named n. */
export function remoteStepInput(name: RemoteStepName, env: Record<string, string>): string {
  const step = remoteStep(name, env);
  return stepInput(`lacchain-besu-node: the ${name} step of node n`, step.env, stepScript(step.scriptFile));
}
