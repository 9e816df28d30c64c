/**
 * Node identity math: private key → public key → enode and node address, exactly as Besu derives them.
 * Pure functions; the secp256k1 and keccak-256 implementations are the audited @noble libraries.
 */
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';

/** Order of the secp256k1 group: a private key is an integer in [1, n-1]. */
export const CURVE_ORDER = secp256k1.CURVE.n;

/** A node's public identity. */
export interface NodeIdentity {
  /** Uncompressed public key without the 04 prefix, `0x` + 128 lowercase hex. */
  publicKey: string;
  /** `enode://<128 hex>@<host>:<port>`. */
  enode: string;
  /** Last 20 bytes of keccak-256 of the public key, `0x` + 40 lowercase hex. */
  address: string;
}

/** Why a text is not a valid node private key. */
export class InvalidNodeKeyError extends Error {}

/**
 * Reads the contents of a key file as Besu does: one line of 64 hex digits, with or without `0x`,
 * one trailing newline tolerated and nothing else. Returns the key as `0x` + 64 lowercase hex.
 */
export function parsePrivateKey(text: string): string {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (body.includes('\n') || body.includes('\r')) {
    throw new InvalidNodeKeyError('holds more than one line; a key file is one line of 64 hex digits');
  }
  const hex = body.startsWith('0x') || body.startsWith('0X') ? body.slice(2) : body;
  if (hex.length === 0) throw new InvalidNodeKeyError('is empty; a key file is one line of 64 hex digits');
  if (!/^[0-9a-fA-F]*$/.test(hex)) {
    throw new InvalidNodeKeyError('is not hexadecimal; a key file is one line of 64 hex digits (optionally 0x)');
  }
  if (hex.length !== 64) {
    throw new InvalidNodeKeyError(`has ${hex.length} hex digits; a key file has exactly 64 (32 bytes)`);
  }
  const value = BigInt(`0x${hex}`);
  if (value === 0n) throw new InvalidNodeKeyError('is zero, which is not a valid secp256k1 private key');
  if (value >= CURVE_ORDER) {
    throw new InvalidNodeKeyError('is not below the secp256k1 curve order, so it is not a valid private key');
  }
  return `0x${hex.toLowerCase()}`;
}

/** The 64-byte public key (no 04 prefix) of a private key, as 128 lowercase hex. */
export function publicKeyHex(privateKey: string): string {
  const key = parsePrivateKey(privateKey);
  const uncompressed = secp256k1.getPublicKey(hexToBytes(key.slice(2)), false);
  return bytesToHex(uncompressed.slice(1));
}

/** The node address of a public key (128 hex, with or without 0x). */
export function addressOfPublicKey(publicKey: string): string {
  const hex = publicKey.replace(/^0x/, '');
  return `0x${bytesToHex(keccak_256(hexToBytes(hex)).slice(12))}`;
}

/**
 * Reads a public key as Besu prints it (`besu public-key export`): 128 hex digits, with or without `0x`, a point of
 * secp256k1. Returns it as `0x` + 128 lowercase hex, or undefined when it is not one.
 */
export function parsePublicKey(text: string): string | undefined {
  const hex = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{128}$/.test(hex)) return undefined;
  try {
    secp256k1.ProjectivePoint.fromHex(`04${hex}`).assertValidity();
  } catch {
    return undefined;
  }
  return `0x${hex.toLowerCase()}`;
}

/** Everything public about a node whose public key (not its private key) is known. */
export function identityOfPublicKey(publicKey: string, host: string, port: number): NodeIdentity {
  const key = parsePublicKey(publicKey);
  if (key === undefined) throw new InvalidNodeKeyError('is not a secp256k1 public key of 128 hex digits');
  return { publicKey: key, enode: formatEnode(key, host, port), address: addressOfPublicKey(key) };
}

/** `enode://<node id>@<host>:<port>`. */
export function formatEnode(publicKey: string, host: string, port: number): string {
  return `enode://${publicKey.replace(/^0x/, '')}@${host}:${port}`;
}

/** Everything public about a node key, for a node advertised on host:port. */
export function deriveIdentity(privateKey: string, host: string, port: number): NodeIdentity {
  const publicKey = publicKeyHex(privateKey);
  return {
    publicKey: `0x${publicKey}`,
    enode: formatEnode(publicKey, host, port),
    address: addressOfPublicKey(publicKey),
  };
}

/**
 * Turns 32 random bytes (hex) into a valid private key. Almost every 32-byte value already is one; the rare value
 * that is zero or not below the curve order is hashed with keccak-256 until it is, so the result stays a pure
 * function of the random bytes and never changes for the same bytes.
 */
export function privateKeyFromRandomHex(randomHex: string): string {
  let hex = randomHex.replace(/^0x/, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new InvalidNodeKeyError('random material must be 32 bytes of hex');
  for (;;) {
    const value = BigInt(`0x${hex}`);
    if (value !== 0n && value < CURVE_ORDER) return `0x${hex}`;
    hex = bytesToHex(keccak_256(hexToBytes(hex)));
  }
}

/** A fresh private key from the operating system's random source. */
export function generatePrivateKey(): string {
  return `0x${bytesToHex(secp256k1.utils.randomPrivateKey())}`;
}

/** A dotted-quad IPv4 address, each part 0 to 255. */
const ENODE_IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/**
 * A DNS name: labels of letters, digits and inner hyphens, joined by dots, at most 253 characters, the last not all
 * digits (`203.0.113.256` is a wrong address, not a name).
 */
const ENODE_DNS_NAME =
  /^(?=.{1,253}$)(?!(.*\.)?\d+$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * Parses an enode URL into its parts; undefined when it is not one: a node id of 128 hex digits, a host that is an
 * IPv4 address or a DNS name (nothing else: the text may come from the node, and ends up in messages), a port.
 */
export function parseEnode(enode: string): { nodeId: string; host: string; port: number } | undefined {
  const match = /^enode:\/\/([0-9a-f]{128})@([^:/?]+):(\d{1,5})(\?discport=\d{1,5})?$/.exec(enode);
  if (!match) return undefined;
  const [, nodeId, host, port] = match;
  if (!ENODE_IPV4.test(host) && !ENODE_DNS_NAME.test(host)) return undefined;
  if (Number(port) > 65535) return undefined;
  return { nodeId, host, port: Number(port) };
}

/** The host and port an enode URL names (`enode://<id>@<host>:<port>`), or undefined when it is not one. */
export function enodeEndpoint(enode: unknown): { host: string; port: number } | undefined {
  if (typeof enode !== 'string') return undefined;
  const match = /^enode:\/\/[0-9a-fA-F]+@([^:/?]+):(\d+)/.exec(enode);
  return match ? { host: match[1], port: Number(match[2]) } : undefined;
}
