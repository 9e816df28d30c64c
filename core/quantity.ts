/**
 * Kubernetes quantities (`375Gi`, `1Ti`, `400G`): the settings' volume-size rule and the policy's both read them here.
 */

const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
};

/** Bytes of a Kubernetes storage quantity (`375Gi`, `1Ti`, `400G`), or undefined when it is not one. */
export function quantityBytes(quantity: unknown): number | undefined {
  if (typeof quantity !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$/.exec(quantity.trim());
  return match ? Number(match[1]) * UNITS[match[2] ?? ''] : undefined;
}
