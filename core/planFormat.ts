/**
 * The offline plan's format, shared by the program's tools (cli/plan.ts writes it, tools/recording records it) and
 * the policy pack (which checks it): the markers that stand for values the plan cannot show, and a planned resource.
 * The policy pack imports it from here, never from tools/.
 */

/** Written in place of a secret value. */
export const SECRET_MARKER = '[secret]';
/** Written in place of a value known only after `pulumi up`. */
export const UNKNOWN_MARKER = '[known after pulumi up]';

/** The Kubernetes Secret's type token, whose data the plan shows by key. */
export const KUBERNETES_SECRET_TYPE = 'kubernetes:core/v1:Secret';

/** Resource options as the engine receives them (names instead of URNs). */
export interface RecordedOptions {
  protect: boolean;
  retainOnDelete: boolean;
  /** The parent resource's name (undefined for the stack itself). */
  parent?: string;
  /** Names of explicit dependencies. */
  dependsOn: string[];
  /** The provider resource's name, when one is set. */
  provider?: string;
  /** Outputs the engine must keep secret. */
  additionalSecretOutputs: string[];
  /** On a replacement, delete the old object before creating the new one. */
  deleteBeforeReplace: boolean;
  /** Input paths whose change replaces the resource instead of updating it. */
  replaceOnChanges: string[];
}

/** A resource as DIR/resources.json holds it: secrets and values unknown until `pulumi up` are markers. */
export interface PlannedResource {
  /** The type token, e.g. `kubernetes:apps/v1:StatefulSet`. */
  type: string;
  /** The resource name, e.g. `writer-node`. */
  name: string;
  /** The resource options the engine received (a plan written by an older version may lack some). */
  options: Partial<RecordedOptions>;
  /** The inputs, redacted. */
  inputs: unknown;
}
