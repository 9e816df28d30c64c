/**
 * The operator's connections, cut on purpose: every ssh connection of a command given `sshOptions` goes through a relay
 * in the test's own process (testing/cuts/relay-pipe.js as ssh's ProxyCommand), which `drop()` ends at once, and
 * refuses new ones until `restore()`: the network between the operator and the machines goes down at a moment of the
 * test's choosing, and a command's next ssh fails as it would. A TCP service (a cluster's API server, which kubectl
 * reaches) is put behind the same network by `relayTo`: its connections end and are refused with the ssh ones.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

const RELAY_PIPE = path.join(__dirname, 'relay-pipe.js');

/** A relay whose connections can be dropped. */
export class CuttableNetwork {
  /** How many times the network was dropped. */
  drops = 0;
  private down = false;
  private readonly sockets = new Set<net.Socket>();
  /** The listeners of relayTo. */
  private readonly relays: net.Server[] = [];

  private constructor(
    private readonly server: net.Server,
    private readonly dir: string,
    private readonly socketPath: string,
  ) {}

  static async open(): Promise<CuttableNetwork> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-cut-net-'));
    const socketPath = path.join(dir, 'relay.sock');
    const server = net.createServer();
    const network = new CuttableNetwork(server, dir, socketPath);
    server.on('connection', (client: net.Socket) => network.relay(client));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));
    return network;
  }

  /** The ssh options (as `ssh -o` takes them) that route a connection through the relay. */
  get sshOptions(): string[] {
    return [`ProxyCommand=${process.execPath} ${RELAY_PIPE} ${this.socketPath} %h %p`];
  }

  /** What the command line of every client through this network holds: its relay's socket. */
  get clientMarker(): string {
    return this.socketPath;
  }

  /** Whether the network is down now. */
  get isDown(): boolean {
    return this.down;
  }

  /** The network goes down: every connection ends at once, and new ones are refused. */
  drop(): void {
    this.down = true;
    this.drops++;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** The network is back. */
  restore(): void {
    this.down = false;
  }

  /**
   * A port on the loopback whose connections go to `host`:`port` through this network (dropped and refused with
   * the ssh ones): e.g. a kubeconfig's `server` pointed at it.
   */
  async relayTo(host: string, port: number): Promise<number> {
    // TLS speaks first from the client: its first bytes start the connection to the destination.
    const listener = net.createServer((client) => this.relay(client, `${host} ${port}\n`));
    this.relays.push(listener);
    await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(0, '127.0.0.1', resolve));
    return (listener.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    this.drop();
    await Promise.all(this.relays.map((listener) => new Promise((resolve) => listener.close(resolve))));
    await new Promise((resolve) => this.server.close(resolve));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * One connection: the first line names the destination (`HOST PORT`), then bytes both ways; `destination`, that
   * line when the client does not send it (relayTo's).
   */
  private relay(client: net.Socket, destination?: string): void {
    if (this.down) {
      client.destroy();
      return;
    }
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    let head = Buffer.from(destination ?? '');
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\n');
      if (end < 0) return;
      client.off('data', onData);
      client.pause();
      const [host, port] = head.subarray(0, end).toString().split(' ');
      const rest = head.subarray(end + 1);
      const server = net.connect(Number(port), host, () => {
        if (rest.length > 0) server.write(rest);
        client.pipe(server);
        server.pipe(client);
        client.resume();
      });
      this.sockets.add(server);
      server.on('close', () => {
        this.sockets.delete(server);
        client.destroy();
      });
      server.on('error', () => server.destroy());
      client.on('close', () => server.destroy());
      if (this.down) server.destroy();
    };
    client.on('data', onData);
  }
}
