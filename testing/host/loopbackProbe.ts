/**
 * Who may open a port on a test host's loopback: a connection made as a given user, and a listener of the test's
 * where the stand-in serves nothing (the Besu stand-in has no WebSocket), so that a fence is what decides.
 */

/** Runs a shell command on the test host as root and returns its trimmed standard output. */
export type HostShell = (command: string) => Promise<string>;

/** `reaches` when `user` opens a TCP connection to 127.0.0.1:`port` on the host, else `refused`. */
export function connectsAs(sh: HostShell, user: string, port: number): Promise<string> {
  return sh(
    `runuser -u ${user} -- bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo reaches || echo refused`,
  );
}

/**
 * Runs `check` while something listens on 127.0.0.1:`port` of the host: what already listens there, or else a
 * listener of the test's (python3, up to 60 s), stopped afterwards.
 */
export async function withLoopbackListener<T>(sh: HostShell, port: number, check: () => Promise<T>): Promise<T> {
  const listening = async () => (await sh(`ss -Htln 'sport = :${port}' | wc -l`)) !== '0';
  if (await listening()) return check();
  const script = [
    'import socket, time',
    's = socket.socket()',
    's.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)',
    `s.bind(("127.0.0.1", ${port}))`,
    's.listen(64)',
    'time.sleep(60)',
  ].join('; ');
  const pid = await sh(`nohup python3 -c '${script}' >/dev/null 2>&1 & echo $!`);
  try {
    for (let i = 0; i < 50 && !(await listening()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    return await check();
  } finally {
    await sh(`kill ${pid} 2>/dev/null || true`);
  }
}
