/**
 * A recording stand-in for the Pulumi engine: runs the program in-process (Pulumi's mock monitor) and records every
 * resource it declares, with its inputs. The offline plan and the wiring tests both use it, so what they show is
 * what the program declares. Any resource type it does not know is an error, so nothing passes by accident.
 *
 * It uses the SDK's public mock API (`pulumi.runtime.setMocks`). Mocks do not hand resource options (protect,
 * retainOnDelete, dependsOn, …) to `newResource`, and the public ways to see them do not run here: stack
 * transformations need a root stack resource, which mocks do not create, and `transforms` are not applied under
 * mocks. So the options alone are read from the registration request on its way to the mock monitor: the one place
 * this module reaches inside the SDK.
 */
import { createHash } from 'crypto';
import * as pulumi from '@pulumi/pulumi';
import { unknown } from '@pulumi/pulumi/output';
import { RecordedOptions, SECRET_MARKER, UNKNOWN_MARKER } from '../../core/planFormat';

/** One declared resource. */
export interface RecordedResource {
  /** The type token, e.g. `kubernetes:apps/v1:StatefulSet`. */
  type: string;
  /** The resource name. */
  name: string;
  /** Component (false) or provider resource (true). */
  custom: boolean;
  /** The inputs as declared; secret values are still wrapped (see redact). */
  inputs: Record<string, unknown>;
  /** The resource options the engine received. */
  options: RecordedOptions;
}

/** The resource name in a URN (`urn:pulumi:stack::project::type::name`). */
function nameOfUrn(urn: string): string | undefined {
  return urn ? urn.split('::').pop() : undefined;
}

/** The provider's name in a provider reference (`<urn>::<id>`). */
function nameOfProviderReference(reference: string): string | undefined {
  return reference ? nameOfUrn(reference.split('::').slice(0, -1).join('::')) : undefined;
}

interface RegisterRequest {
  getType(): string;
  getName(): string;
  getProtect(): boolean | undefined;
  getRetainondelete(): boolean | undefined;
  getParent(): string;
  getDependenciesList(): string[];
  getProvider(): string;
  getAdditionalsecretoutputsList(): string[];
  getDeletebeforereplace(): boolean | undefined;
  getReplaceonchangesList(): string[];
}

/** What a resource's outputs are beyond its inputs, per type: return undefined to leave them unknown. */
export type OutputsFor = (resource: RecordedResource) => Record<string, unknown> | undefined;

/** Options of the recording engine. */
export interface EngineOptions {
  /** Project and stack names the program sees. */
  project: string;
  stack: string;
  /** Preview: outputs not given by `outputsFor` stay unknown, as in `pulumi preview`. */
  preview: boolean;
  /** Resource types the program may declare (prefix match); anything else throws. */
  knownTypes: readonly string[];
  /** Outputs per resource beyond the inputs. */
  outputsFor?: OutputsFor;
}

export { SECRET_MARKER, UNKNOWN_MARKER } from '../../core/planFormat';
export type { RecordedOptions } from '../../core/planFormat';

const SECRET_SIG_KEY = '4dabf18193072939515e22adb298388d';
/** The type of a StackReference (components/lastPlaces.ts reads the stack's own last outputs through one). */
const STACK_REFERENCE = 'pulumi:pulumi:StackReference';
/** The organization of every stack in a file backend (Pulumi.yaml's). */
const FILE_BACKEND_ORGANIZATION = 'organization';
const SECRET_SIG = '1b47061264138c4ac30d75fd1eb44270';
const UNKNOWN_TEXT = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

/** Installs the recording engine; returns the list it fills. Call before declaring any resource. */
export function startRecording(options: EngineOptions): RecordedResource[] {
  const resources: RecordedResource[] = [];
  const pendingOptions = new Map<string, RecordedOptions>();
  pulumi.runtime.setMocks(
    {
      newResource(args) {
        if (!options.knownTypes.some((prefix) => args.type.startsWith(prefix))) {
          throw new Error(`the recording engine does not know resource type ${args.type} (${args.name})`);
        }
        const recordedOptions = pendingOptions.get(`${args.type}::${args.name}`) ?? {
          protect: false,
          retainOnDelete: false,
          dependsOn: [],
          additionalSecretOutputs: [],
          deleteBeforeReplace: false,
          replaceOnChanges: [],
        };
        const record: RecordedResource = {
          type: args.type,
          name: args.name,
          custom: args.custom ?? true,
          inputs: args.inputs,
          options: recordedOptions,
        };
        resources.push(record);
        // A StackReference reads a stack with no outputs (a stack never deployed), unless outputsFor gives them.
        const read = args.type === STACK_REFERENCE ? { outputs: {}, secretOutputNames: [] } : {};
        const extra = options.outputsFor?.(record) ?? {};
        return { id: args.custom ? `${args.name}-id` : undefined, state: { ...args.inputs, ...read, ...extra } };
      },
      call(args) {
        throw new Error(`the recording engine does not answer function calls (${args.token})`);
      },
    },
    options.project,
    options.stack,
    options.preview,
    // The file backend's organization, as `pulumi up` gives it (a StackReference to the stack itself names it).
    FILE_BACKEND_ORGANIZATION,
  );
  // The mock monitor does not pass resource options to newResource: read them from the request on the way in.
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource(request: RegisterRequest, callback: unknown): unknown;
  };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (request, callback) => {
    pendingOptions.set(`${request.getType()}::${request.getName()}`, {
      protect: request.getProtect() ?? false,
      retainOnDelete: request.getRetainondelete() ?? false,
      parent: nameOfUrn(request.getParent()),
      dependsOn: request.getDependenciesList().map((u) => nameOfUrn(u) ?? u),
      provider: nameOfProviderReference(request.getProvider()),
      additionalSecretOutputs: [...new Set(request.getAdditionalsecretoutputsList())],
      deleteBeforeReplace: request.getDeletebeforereplace() ?? false,
      replaceOnChanges: request.getReplaceonchangesList(),
    });
    return register(request, callback);
  };
  return resources;
}

/** True for a value that the engine holds as a secret. */
export function isWrappedSecret(value: unknown): value is { value: unknown } {
  return (
    typeof value === 'object' && value !== null && (value as Record<string, unknown>)[SECRET_SIG_KEY] === SECRET_SIG
  );
}

/** A copy of recorded inputs with every secret replaced by SECRET_MARKER and every unknown by UNKNOWN_MARKER. */
export function redact(value: unknown): unknown {
  if (isWrappedSecret(value)) return SECRET_MARKER;
  if (value === unknown || value === UNKNOWN_TEXT) return UNKNOWN_MARKER;
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
  }
  return value;
}

/** A copy of recorded inputs with secrets unwrapped (tests check the values a resource really receives). */
export function unwrapSecrets(value: unknown): unknown {
  if (isWrappedSecret(value)) return unwrapSecrets(value.value);
  if (Array.isArray(value)) return value.map(unwrapSecrets);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrapSecrets(v)]));
  }
  return value;
}

/** Deterministic bytes for tests: the same resource name always gets the same "random" material. */
export function deterministicHex(seed: string, bytes: number): string {
  let out = '';
  for (let i = 0; out.length < bytes * 2; i++) out += createHash('sha256').update(`${seed}/${i}`).digest('hex');
  return out.slice(0, bytes * 2);
}

/**
 * The value of an output and whether it is known and secret. Uses the SDK's `isKnown` and `promise()` (present on
 * every Output for years, though not in the typings), so an unknown preview value is reported without waiting.
 */
export async function settle<T>(output: pulumi.Output<T>): Promise<{ known: boolean; value?: T; secret: boolean }> {
  const inner = output as unknown as { isKnown: Promise<boolean>; promise(): Promise<T> };
  const known = await inner.isKnown;
  const value = known ? await inner.promise() : undefined;
  return { known, value, secret: await pulumi.isSecret(output) };
}
