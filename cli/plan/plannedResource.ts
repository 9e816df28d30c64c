/**
 * The one shape of a planned resource: what the offline plan writes to DIR/resources.json, what `--diff` reads back
 * (an older plan may lack newer options) and what the policy step of the plan checks.
 */
import { KUBERNETES_SECRET_TYPE, PlannedResource, SECRET_MARKER } from '../../core/planFormat';
import { isWrappedSecret, RecordedResource, redact } from '../../tools/recording/engine';

export type { PlannedResource } from '../../core/planFormat';

/**
 * A recorded resource's inputs as the plan shows them: every secret and unknown as its marker. A Kubernetes Secret
 * keeps the keys of its `data` and `stringData`, each value a marker, so the plan's manifests stay objects that
 * kubeconform and `kubectl apply --dry-run` accept (a key names a file, never its content).
 */
export function plannedInputs(resource: Pick<RecordedResource, 'type' | 'inputs'>): unknown {
  const shown = redact(resource.inputs);
  if (resource.type !== KUBERNETES_SECRET_TYPE || !shown || typeof shown !== 'object') return shown;
  const inputs = resource.inputs as Record<string, unknown>;
  for (const field of ['data', 'stringData']) {
    const given = inputs[field];
    // Its keys when they are known (a value known only after pulumi up stays that marker as a whole).
    const value = redact(isWrappedSecret(given) ? given.value : given);
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      (shown as Record<string, unknown>)[field] = Object.fromEntries(
        Object.keys(value).map((key) => [key, SECRET_MARKER]),
      );
    }
  }
  return shown;
}

/** A recorded resource as DIR/resources.json holds it. */
export function plannedResource(resource: RecordedResource): PlannedResource {
  return { type: resource.type, name: resource.name, options: resource.options, inputs: plannedInputs(resource) };
}
