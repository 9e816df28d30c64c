/**
 * A node's key custody (`lacchain:nodes[i].keyCustody`, with `keySecret`, `keySecretEntry` and `publicKey`), checked
 * against its target: `machine` is for SSH nodes, `secret` for Kubernetes nodes, and a `secret` node names its Secret
 * and gives its public key.
 */
import {
  DEFAULT_KEY_CUSTODY,
  DEFAULT_KEY_SECRET_ENTRY,
  KEY_CUSTODIES,
  KEY_CUSTODY_FACTS,
  KeyCustody,
  Target,
} from '../catalog/keyCustody';
import type { KeySecretReference } from './model';
import { describeGiven, Problem } from './problems';
import type { StackNodeInput } from './schema';

/** The fields that name the operator's Secret. */
const KEY_SECRET_FIELDS = ['keySecret', 'keySecretEntry'] as const;

/** What `secret` custody needs, and what each is. */
const SECRET_CUSTODY_NEEDS = {
  keySecret:
    "the name of your Secret holding the node key, in the node's namespace (keyCustody secret: the program mounts it, never makes it)",
  publicKey:
    'the public key of the key in keySecret, 0x + 128 hex digits (besu public-key export): the enode and address come from it',
} as const;

/** A node's custody settings, validated. */
export interface NodeKeyCustody {
  keyCustody: KeyCustody;
  publicKey?: string;
  keySecret?: KeySecretReference;
}

/** The custodies a node on this target may have, in words. */
function custodiesOf(target: Target): string {
  return KEY_CUSTODIES.filter((custody) => KEY_CUSTODY_FACTS[custody].targets.includes(target)).join(' or ');
}

/** Reads and cross-checks the custody fields of a node entry (`key`: `lacchain:nodes[i]`). */
export function readKeyCustody(
  entry: StackNodeInput,
  target: Target,
  key: string,
  file: string,
  problems: Problem[],
): NodeKeyCustody {
  const keyCustody = entry.keyCustody ?? DEFAULT_KEY_CUSTODY;
  if (!KEY_CUSTODY_FACTS[keyCustody].targets.includes(target)) {
    problems.push({
      file,
      key: `${key}.keyCustody`,
      given: describeGiven(keyCustody),
      allowed: `${custodiesOf(target)} for a ${target} node (${keyCustody} is for ${KEY_CUSTODY_FACTS[keyCustody].targets.join(' and ')} nodes${target === 'kubernetes' ? ": to keep a cluster node's key out of the state, use secret" : ": to keep a machine's key out of the state, use machine"})`,
    });
  }
  if (keyCustody !== 'secret') {
    const fields = keyCustody === 'machine' ? KEY_SECRET_FIELDS : [...KEY_SECRET_FIELDS, 'publicKey' as const];
    for (const field of fields) {
      if (entry[field] === undefined) continue;
      problems.push({
        file,
        key: `${key}.${field}`,
        given: describeGiven(entry[field]),
        allowed: `nothing with keyCustody ${keyCustody}: ${field} is for keyCustody ${field === 'publicKey' ? 'secret or machine' : 'secret (a key in a Secret you make)'}`,
      });
    }
    // Machine custody: the public key, when given, pins the key the machine must hold (never a new one made).
    return {
      keyCustody,
      ...(entry.publicKey !== undefined && keyCustody === 'machine' ? { publicKey: entry.publicKey } : {}),
    };
  }
  for (const [field, allowed] of Object.entries(SECRET_CUSTODY_NEEDS) as [
    keyof typeof SECRET_CUSTODY_NEEDS,
    string,
  ][]) {
    if (entry[field] === undefined) problems.push({ file, key: `${key}.${field}`, given: 'missing', allowed });
  }
  return {
    keyCustody,
    ...(entry.publicKey !== undefined ? { publicKey: entry.publicKey } : {}),
    ...(entry.keySecret !== undefined
      ? { keySecret: { name: entry.keySecret, entry: entry.keySecretEntry ?? DEFAULT_KEY_SECRET_ENTRY } }
      : {}),
  };
}
