/**
 * The node's p2p port probed from the operator's machine, as a peer would reach it: a TCP connection, and a UDP
 * datagram (discovery) whose refusal (ICMP port unreachable) shows a closed port. A datagram that is not refused may
 * be received or dropped: UDP cannot tell more without speaking devp2p discovery.
 */
import * as dgram from 'dgram';
import * as net from 'net';
import type { ProbeResult } from '../../core/operations/causes';

/** How long a probe waits for a connection or a refusal. */
const PROBE_TIMEOUT_MS = 3000;

/** Connects to `host:port` over TCP: open, refused, or no answer in time. */
export function probeTcp(host: string, port: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: ProbeResult) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done('no answer'));
    socket.once('connect', () => done('open'));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(error.code === 'ECONNREFUSED' ? 'refused' : 'no answer'),
    );
  });
}

/** Sends one datagram to `host:port` from a connected UDP socket: refused (ICMP port unreachable), or no refusal. */
export function probeUdp(host: string, port: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    let finished = false;
    const done = (result: ProbeResult) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.close();
      resolve(result);
    };
    const timer = setTimeout(() => done('no refusal'), PROBE_TIMEOUT_MS);
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(error.code === 'ECONNREFUSED' ? 'refused' : 'no refusal'),
    );
    socket.connect(port, host, () => {
      // Sent twice: the refusal of the first datagram is reported on the second send or as an error.
      socket.send(Buffer.from('lacchain p2p probe'));
      setTimeout(() => !finished && socket.send(Buffer.from('lacchain p2p probe')), 500);
    });
  });
}
