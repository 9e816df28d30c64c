import {
  addressOfPublicKey,
  CURVE_ORDER,
  deriveIdentity,
  formatEnode,
  parseEnode,
  parsePrivateKey,
  privateKeyFromRandomHex,
  publicKeyHex,
} from '../../core/identity/nodeKey';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex } from '@noble/hashes/utils';
import { KEY_ONE, KEY_ONE_ADDRESS, KEY_ONE_PUBLIC } from '../../testing/fixtures';

const key = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;

describe('published secp256k1 vectors', () => {
  // Public points from the SEC 2 generator and the well-known small multiples; addresses are Ethereum's.
  const vectors: Array<[bigint, string, string]> = [
    [1n, KEY_ONE_PUBLIC, KEY_ONE_ADDRESS],
    [
      2n,
      'c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee51ae168fea63dc339a3c58419466ceaeef7f632653266d0e1236431a950cfe52a',
      '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf',
    ],
    [
      3n,
      'f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9388f7b0f632de8140fe337e62a37f3566500a99934c2231b6cb9fd7584b8e672',
      '0x6813eb9362372eef6200f3b1dbc3f819671cba69',
    ],
  ];
  it.each(vectors)('private key %s', (k, publicKey, address) => {
    expect(publicKeyHex(key(k))).toBe(publicKey);
    expect(addressOfPublicKey(publicKey)).toBe(address);
  });

  it('n-1 gives the negated generator point', () => {
    expect(publicKeyHex(key(CURVE_ORDER - 1n))).toBe(
      '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798b7c52588d95c3b9aa25b0403f1eef75702e84bb7597aabe663b82f6f04ef2777',
    );
  });

  it('uses keccak-256, not SHA3-256', () => {
    expect(bytesToHex(keccak_256(new Uint8Array()))).toBe(
      'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
    );
  });
});

describe('identity', () => {
  it('formats the enode and address as Besu does', () => {
    const identity = deriveIdentity(KEY_ONE, '203.0.113.10', 60606);
    expect(identity).toEqual({
      publicKey: `0x${KEY_ONE_PUBLIC}`,
      enode: `enode://${KEY_ONE_PUBLIC}@203.0.113.10:60606`,
      address: KEY_ONE_ADDRESS,
    });
    expect(parseEnode(identity.enode)).toEqual({ nodeId: KEY_ONE_PUBLIC, host: '203.0.113.10', port: 60606 });
    expect(formatEnode(`0x${KEY_ONE_PUBLIC}`, 'h', 1)).toBe(`enode://${KEY_ONE_PUBLIC}@h:1`);
  });

  it('reads an enode whose host is an IPv4 address or a DNS name, with or without its discovery port', () => {
    expect(parseEnode(`enode://${KEY_ONE_PUBLIC}@node-1.example.org:30303?discport=30301`)).toEqual({
      nodeId: KEY_ONE_PUBLIC,
      host: 'node-1.example.org',
      port: 30303,
    });
    expect(parseEnode(`enode://${KEY_ONE_PUBLIC}@10.0.0.1:1`)?.host).toBe('10.0.0.1');
  });

  // A backup's data/enode is written by the service user, and an enode ends up in the operator's messages.
  it.each([
    ['a terminal escape (OSC 52, the clipboard)', '\x1b]52;c;ZWNobyBoaQ==\x07203.0.113.10'],
    ['a CSI sequence', '203.0.113.10\x1b[2J'],
    ['a BEL', 'host\x07'],
    ['a newline', 'host\nerror: forged line'],
    ['a carriage return', 'host\r'],
    ['a space', 'two words'],
    ['a DEL', 'host\x7f'],
    ['an 8-bit CSI', 'host\x9b31m'],
    ['an IPv4 part above 255', '203.0.113.256'],
    ['a label ending in a hyphen', 'node-.example.org'],
    ['an underscore', 'node_1.example.org'],
    ['a non-ASCII letter', 'nodé.example.org'],
  ])('refuses a host with %s', (_name, host) => {
    expect(parseEnode(`enode://${KEY_ONE_PUBLIC}@${host}:60606`)).toBeUndefined();
  });

  it('refuses a port above 65535', () => {
    expect(parseEnode(`enode://${KEY_ONE_PUBLIC}@203.0.113.10:65536`)).toBeUndefined();
  });
});

describe('key file contents', () => {
  const hex = KEY_ONE.slice(2);
  it.each([
    ['with 0x', `0x${hex}`],
    ['without 0x', hex],
    ['with one trailing newline', `0x${hex}\n`],
    ['in upper case', `0x${hex.toUpperCase()}`],
  ])('accepts a key %s', (_name, text) => {
    expect(parsePrivateKey(text)).toBe(KEY_ONE);
  });

  it.each([
    ['empty', '', /empty/],
    ['too short', '0x1234', /has 4 hex digits/],
    ['too long', `0x${hex}00`, /has 66 hex digits/],
    ['not hex', `0x${'g'.repeat(64)}`, /not hexadecimal/],
    ['zero', key(0n), /zero/],
    ['the curve order', key(CURVE_ORDER), /curve order/],
    ['above the curve order', key(CURVE_ORDER + 5n), /curve order/],
    ['two lines', `${KEY_ONE}\n${KEY_ONE}\n`, /more than one line/],
    ['two trailing newlines', `${KEY_ONE}\n\n`, /more than one line/],
    ['ended by CRLF', `${KEY_ONE}\r\n`, /more than one line/],
    ['spaces around', ` ${KEY_ONE}`, /not hexadecimal/],
  ])('refuses a key that is %s', (_name, text, message) => {
    expect(() => parsePrivateKey(text)).toThrow(message);
  });
});

describe('generated keys', () => {
  it('keeps random material that is already a valid key', () => {
    expect(privateKeyFromRandomHex('ab'.repeat(32))).toBe(`0x${'ab'.repeat(32)}`);
  });
  it.each([
    ['zero', '00'.repeat(32)],
    ['the curve order', CURVE_ORDER.toString(16)],
    ['all ones', 'ff'.repeat(32)],
  ])('hashes material that is %s into a valid key, the same every time', (_name, material) => {
    const first = privateKeyFromRandomHex(material);
    expect(() => parsePrivateKey(first)).not.toThrow();
    expect(first).not.toBe(`0x${material}`);
    expect(privateKeyFromRandomHex(material)).toBe(first);
  });
});
