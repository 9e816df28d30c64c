/**
 * Running the program under the recording engine in tests: deterministic "random" key material, no preview.
 */
import { deterministicHex, OutputsFor, RecordedResource, startRecording } from '../tools/recording/engine';
import { PROGRAM_RESOURCE_TYPES } from '../tools/recording/programTypes';

/** Every resource type the program may declare. */
export const PROGRAM_TYPES = PROGRAM_RESOURCE_TYPES;

/**
 * Starts recording as `pulumi up` would run (not a preview), with deterministic random bytes; `moreOutputs` gives
 * what else the engine returns (a Service's status, as a cloud gives it).
 */
export function recordProgram(stack = 'testnet', moreOutputs?: OutputsFor): RecordedResource[] {
  return startRecording({
    project: 'lacchain-besu-node',
    stack,
    preview: false,
    knownTypes: PROGRAM_TYPES,
    outputsFor: (resource) => {
      if (resource.type === 'random:index/randomBytes:RandomBytes') {
        const hex = deterministicHex(resource.name, Number(resource.inputs.length));
        return { hex, base64: Buffer.from(hex, 'hex').toString('base64') };
      }
      return moreOutputs?.(resource);
    },
  });
}

/** Lets every pending registration reach the engine. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}
