/**
 * The TLS identity of a machine's proxy, read from what the proxy step printed (TLS_IDENTITY_LINES): what a client
 * pins instead of turning certificate verification off.
 */
import { TLS_IDENTITY_LINES } from '../catalog/remote';

/** The certificate a machine's proxy serves, as clients pin it. */
export interface TlsIdentity {
  /** SHA-256 fingerprint of the certificate, colon-separated upper-case hex (`openssl x509 -fingerprint -sha256`). */
  certificateSha256?: string;
  /** SHA-256 pin of its public key, `sha256//<base64>` (`curl --pinnedpubkey`). */
  publicKeyPin?: string;
}

const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;
const PIN = /^sha256\/\/[A-Za-z0-9+/]{43}=$/;

/** The last value printed after `label`, when it has the expected form. */
function lastValue(output: string, label: string, form: RegExp): string | undefined {
  const values = output
    .split('\n')
    .filter((line) => line.startsWith(`${label} `))
    .map((line) => line.slice(label.length + 1).trim())
    .filter((value) => form.test(value));
  return values[values.length - 1];
}

/** The TLS identity in a proxy step's output; a field is absent when the output does not hold it. */
export function tlsIdentityOf(output: string | undefined): TlsIdentity {
  const text = output ?? '';
  const certificateSha256 = lastValue(text, TLS_IDENTITY_LINES.certificateSha256, FINGERPRINT);
  const publicKeyPin = lastValue(text, TLS_IDENTITY_LINES.publicKeyPin, PIN);
  return { ...(certificateSha256 ? { certificateSha256 } : {}), ...(publicKeyPin ? { publicKeyPin } : {}) };
}
