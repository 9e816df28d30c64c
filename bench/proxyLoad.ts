/**
 * The reverse proxy under many slow clients (`npm run bench -- --only proxy`): the writer's gas-model server and a
 * plain server, rendered by core/proxy/nginxConf.ts with the schema's defaults, in a real nginx (Debian's, with its
 * Lua module and cjson: testing/nginx.ts) with one worker; slow clients from several loopback addresses each send
 * their headers in pieces and part of a large body, then a byte a second (testing/proxyLoad.ts). Measured: the
 * worker's resident memory before and at its peak, how many connections were refused (429) or held, and the time of
 * one legitimate request sent meanwhile from another address. The same load runs against the file as it was before
 * the proxy bounded slow clients (`previousBounds`: a body buffer as large as the body limit, one buffer, no limit
 * on connections per address, no time-outs of its own). Needs root; loopback only.
 */
import { PROXY_CLIENT_BOUNDS } from '../core/catalog/rpc';
import { fixed, PartResult, progress, sectionTop, table } from './common';
import { nginxMissing, standIn, startNginx } from '../testing/nginx';
import { freePort } from '../testing/ports';
import { loadTestSite, loopbackAddresses, slowLoad, SlowLoadResult } from '../testing/proxyLoad';

/** The load: 10 addresses, 30 connections each, a 1 MiB body announced, 512 KiB sent at once, held 5 s. */
const LOAD = { addresses: 10, perAddress: 30, bodyBytes: 1024 * 1024 - 1024, sentBytes: 512 * 1024, holdMs: 5000 };

/** The pod's proxy container's memory limit (core/kubernetes/manifests.ts), for the verdict. */
const POD_LIMIT_MIB = 128;

/**
 * The site as the renderer wrote it before slow clients were bounded: the gas-model server's body buffer as large as
 * the body limit in one buffer, no connection limit per address, and nginx's own time-outs and header buffers.
 */
export function previousBounds(site: string, maxBodySize: string): string {
  const bounded = [
    /^limit_conn_zone .*\n/m,
    /^ {4}limit_conn .*\n/gm,
    /^ {4}limit_conn_status .*\n/gm,
    /^ {4}(client_header_timeout|client_body_timeout|send_timeout|keepalive_timeout|large_client_header_buffers) .*\n/gm,
  ];
  let text = site;
  for (const pattern of bounded) {
    if (!pattern.test(text))
      throw new Error(`the rendered site has no ${pattern.source}: previousBounds is out of date`);
    pattern.lastIndex = 0;
    text = text.replace(pattern, '');
  }
  const router = 'access_by_lua_block {';
  const blocks = text.split(/^server \{$/m);
  return blocks
    .map((block) =>
      block.includes(router)
        ? block.replace(
            /^ {4}client_body_buffer_size .*$/m,
            `    client_body_buffer_size ${maxBodySize};\n    client_body_in_single_buffer on;`,
          )
        : block.replace(/^ {4}client_body_buffer_size .*\n/m, ''),
    )
    .join('server {');
}

/**
 * One run of the load against a site made from the ports (the test runs it too: tests/e2e/proxyLoad.test.ts). With
 * `silent`, two more connections go silent (one in its headers, one in its body) and the hold lasts past the
 * proxy's client time-out, to see them closed.
 */
export async function benchLoad(
  site: (ports: Parameters<typeof loadTestSite>[0]) => string,
  options: { silent?: boolean } = {},
): Promise<SlowLoadResult> {
  const besu = await standIn('besu');
  const signer = await standIn('relay-signer');
  const ports = {
    gasModelPort: await freePort(),
    plainPort: await freePort(),
    besuPort: besu.port,
    relaySignerPort: signer.port,
  };
  const nginx = await startNginx({
    site: site(ports),
    ports: [ports.gasModelPort, ports.plainPort],
    workerConnections: 1024,
    logLevel: 'error',
  });
  try {
    return await slowLoad({
      ports: [ports.gasModelPort, ports.plainPort],
      addresses: loopbackAddresses(2, LOAD.addresses),
      perAddress: LOAD.perAddress,
      bodyBytes: LOAD.bodyBytes,
      sentBytes: LOAD.sentBytes,
      holdMs: options.silent ? (PROXY_CLIENT_BOUNDS.clientTimeoutSeconds + 2) * 1000 : LOAD.holdMs,
      silent: options.silent,
      workerPids: nginx.workerPids,
      legitimate: {
        port: ports.gasModelPort,
        address: '127.0.0.200',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      },
    });
  } finally {
    await nginx.stop();
    await besu.close();
    await signer.close();
  }
}

const mib = (kib: number) => kib / 1024;

/** Measures the load against the previous bounds and the current ones. */
export async function benchProxy(): Promise<PartResult> {
  const reason = nginxMissing();
  if (reason) throw new Error(`the proxy part needs a real nginx: ${reason}`);
  const rows: (string | number)[][] = [];
  const results: [string, SlowLoadResult][] = [];
  for (const [label, site] of [
    [
      'before (1 MiB body buffer, no limit per address)',
      (p: Parameters<typeof loadTestSite>[0]) => previousBounds(loadTestSite(p), '1m'),
    ],
    ['now', loadTestSite],
  ] as const) {
    progress(`proxy: ${label}`);
    const result = await benchLoad(site);
    results.push([label, result]);
    const counts = Object.values(result.perAddress);
    const sum = (key: 'refused' | 'answered' | 'held') => counts.reduce((total, c) => total + c[key], 0);
    rows.push([
      label,
      result.connections,
      result.addresses,
      sum('held'),
      sum('refused'),
      sum('answered'),
      fixed(mib(result.rssBeforeKiB), 1),
      `**${fixed(mib(result.rssPeakKiB), 1)}**`,
      fixed(result.seconds, 1),
      `${result.legitimate.status} in ${result.legitimate.ms} ms`,
    ]);
  }
  const peakNow = mib(results[results.length - 1][1].rssPeakKiB);
  const markdown = [
    ...(await sectionTop(
      'The reverse proxy under many slow clients (bench/proxyLoad.ts)',
      `Debian's nginx with its Lua module and cjson (the packages the SSH path installs; the pod runs OpenResty), one worker, running the file core/proxy/nginxConf.ts renders for an SSH writer with the schema's defaults: its gas-model server (port 80, moved to a loopback port) and a plain server with the same rules, in front of stand-ins for Besu and the relay signer. ${LOAD.addresses} loopback addresses (127.0.0.2 onwards) open ${LOAD.perAddress} connections each, alternately to the two servers; each sends its headers in two pieces, announces a ${LOAD.bodyBytes}-byte body, sends ${LOAD.sentBytes / 1024} KiB of it, then one byte a second, and is held ${LOAD.holdMs / 1000} s. Worker memory is the sum of VmRSS of nginx's workers (/proc/<pid>/status), sampled every 50 ms. Meanwhile one legitimate request (eth_chainId) is sent from 127.0.0.200 to the gas-model server. "before" is the same file with the bounds this change added taken out again (previousBounds: the gas-model server's body buffer as large as the 1 MiB body limit in one buffer, no limit_conn, nginx's own time-outs).`,
    )),
    '',
    table(
      [
        'Proxy file',
        'Connections',
        'Addresses',
        'Held',
        'Refused (429)',
        'Answered otherwise',
        'Worker RSS before (MiB)',
        'Worker RSS peak (MiB)',
        'Time (s)',
        'Legitimate request',
      ],
      rows,
    ),
    '',
    `Target: the worker's peak well under the pod's ${POD_LIMIT_MIB} MiB limit (64 MiB): ${peakNow < 64 ? 'met' : 'NOT met'} (${fixed(peakNow, 1)} MiB).`,
    '',
  ].join('\n');
  return { name: 'proxy', markdown };
}
