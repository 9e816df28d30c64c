/**
 * The check of the identity tools' --host and --port (their options: cli/hostPortOptions.ts).
 */
import { hostAddress, port as portRule } from '../core/settings/fields';
import { PORTS } from '../core/catalog/ports';
import { UsageError } from './cli';

/** Validates --host (IPv4 or DNS name) and --port (default the p2p port). */
export function hostAndPort(host: string | undefined, port: string | undefined): { host: string; port: number } {
  if (host === undefined) throw new UsageError('--host is required: the IP address advertised to peers');
  if (!hostAddress.safeParse(host).success)
    throw new UsageError(`--host: given ${JSON.stringify(host)}; allowed: an IPv4 address or a DNS name`);
  const portNumber = port === undefined ? PORTS.p2p : Number(port);
  if (!/^\d+$/.test(port ?? '0') || !portRule.safeParse(portNumber).success) {
    throw new UsageError(
      `--port: given ${JSON.stringify(port)}; allowed: a whole number from ${PORTS.min} to ${PORTS.max}`,
    );
  }
  return { host, port: portNumber };
}
