/**
 * The `nodes` output of the stack's last `pulumi up` (each node's `place` among it), read back into this run through a
 * StackReference to the stack itself before any node is declared: the program refuses a node moved without
 * `npm run node -- move` (core/node/place.ts) as soon as a preview would.
 */
import * as pulumi from '@pulumi/pulumi';

/** The last run's `nodes` output, or undefined (a stack never deployed, or a backend that cannot be read back). */
export async function lastNodesOutput(): Promise<unknown> {
  const self = `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
  try {
    const details = await new pulumi.StackReference('last-run', { name: self }).getOutputDetails('nodes');
    return details.value ?? details.secretValue;
  } catch (error) {
    void pulumi.log.warn(
      `cannot read the stack's last outputs (${(error as Error).message}): node places not compared`,
    );
    return undefined;
  }
}
