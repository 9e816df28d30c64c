/**
 * The TLS identity of a machine's proxy, read from what the proxy step printed: the certificate's SHA-256 fingerprint
 * and its public key's pin (the real step's lines are checked against the host's certificate in tests/e2e/sshNode).
 */
import { TLS_IDENTITY_LINES } from '../../core/catalog/remote';
import { tlsIdentityOf } from '../../core/remote/tlsIdentity';

describe('the TLS identity in the proxy step output', () => {
  const fingerprint = Array.from({ length: 32 }, (_, i) => (i * 7).toString(16).padStart(2, '0').toUpperCase()).join(
    ':',
  );
  const pin = `sha256//${Buffer.alloc(32, 3).toString('base64')}`;

  it('takes the last fingerprint and pin printed, and nothing else', () => {
    const output = [
      'proxy: made a self-signed certificate for IP:190.51.100.8',
      `${TLS_IDENTITY_LINES.certificateSha256} ${'00:'.repeat(31)}00`,
      `${TLS_IDENTITY_LINES.certificateSha256} ${fingerprint}`,
      `${TLS_IDENTITY_LINES.publicKeyPin} ${pin}`,
      'proxy: ok',
    ].join('\n');
    expect(tlsIdentityOf(output)).toEqual({ certificateSha256: fingerprint, publicKeyPin: pin });
  });

  it('gives nothing for an output without them, or with values of another form', () => {
    expect(tlsIdentityOf(undefined)).toEqual({});
    expect(tlsIdentityOf('proxy: ok')).toEqual({});
    expect(tlsIdentityOf(`${TLS_IDENTITY_LINES.certificateSha256} not-a-fingerprint\n`)).toEqual({});
    expect(tlsIdentityOf(`${TLS_IDENTITY_LINES.publicKeyPin} sha1//abc\n`)).toEqual({});
  });
});
