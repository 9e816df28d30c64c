/**
 * The one shape of a planned resource: what the offline plan writes to DIR/resources.json, what `--diff` reads back
 * (an older plan may lack newer options) and what the policy step of the plan checks.
 */
import type { RecordedOptions } from '../recording/engine';

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
