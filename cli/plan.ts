/**
 * `npm run --silent plan -- --stack <testnet|mainnet> --out DIR [options]`: the offline plan. Its options and help
 * are in cli/plan/spec.ts; the work, in cli/plan/run.ts, is loaded only to do it.
 *
 * The offline plan runs the program (program.ts, the code `pulumi up` runs) under a recording engine, without the
 * Pulumi engine or any cloud credentials, and writes what `pulumi up` would create:
 *   DIR/resources.json          every resource: type, name, inputs (secrets replaced by "[secret]")
 *   DIR/kubernetes/<node>.yaml  the manifests of each Kubernetes node, as plain Kubernetes YAML
 *   DIR/remote/<node>/          the ordered provisioning scripts of each SSH node, with their non-secret parameters
 * and prints the stack outputs as JSON (enode and address computed when the node's key is given).
 * Bad settings fail exactly as `pulumi up` would (exit 2).
 *
 * It also runs the policy pack's rules (policy/rules.ts) over the recorded resources: DIR/policy.json lists them and
 * what they found; each violation is printed on standard error and makes the plan exit 1 (after writing everything);
 * an advisory rule's finding (an explicit opt-out, such as accept_any_host_key) is printed as a warning only.
 * With --diff BASE_DIR (an earlier plan's folder) or --diff-ref REF (the same stack planned at a git ref), it also
 * prints on standard error what `pulumi up` would create, change and delete, and writes DIR/diff.json and diff.txt.
 */
import { runCli } from './cli';
import { PLAN_TOOL } from './plan/spec';

runCli(PLAN_TOOL, async (line) => (await import('./plan/run')).run(line));
