/**
 * A move's pipe between two clients (cli/operations/moveShared.ts pipeClients: `ssh tar c` on the old machine into
 * `ssh tar x` on the new one), with sh standing in for the clients: whichever end stops first, the pipe ends and says
 * how each end ended; it never waits for ever on a source that nobody reads any more.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pipeClients } from '../../cli/operations/moveShared';

/** The pipe's outcome, or `still running` when it has not ended within `seconds`. */
function outcome(pipe: Promise<void>, seconds = 8): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    pipe.then(
      () => 'done',
      (error: Error) => error.message,
    ),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still running'), seconds * 1000))),
  ]).finally(() => clearTimeout(timer));
}

const sh = (script: string): [string, string[]] => ['sh', ['-c', script]];

describe("a move's pipe between two clients", () => {
  it("carries the source's output whole into the sink", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-pipe-'));
    const file = path.join(dir, 'carried');
    try {
      const said = await outcome(
        pipeClients(sh('head -c 3000000 /dev/zero | tr "\\0" x'), sh(`cat > ${file}`), 'carrying'),
      );
      expect(said).toBe('done');
      expect(fs.statSync(file).size).toBe(3_000_000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends the source when the sink failed before it wrote (no write fails then), naming how each ended', async () => {
    const said = await outcome(
      pipeClients(sh('sleep 0.5; head -c 10000000 /dev/zero'), sh('echo tar: cannot open >&2; exit 3'), 'carrying'),
    );
    expect(said).toBe('carrying failed (exit 3, SIGTERM): tar: cannot open');
  });

  it("ends the source when the sink is an ssh that could not connect (the carry's tar x at a slow hour)", async () => {
    // Loopback's port 1: refused at once, before the source wrote a byte (the hang of a cold run of 9f36a7b).
    const ssh = [
      '-F',
      'none',
      '-o',
      'BatchMode=yes',
      '-o',
      'ConnectTimeout=5',
      '-p',
      '1',
      'root@127.0.0.1',
      'tar -xf -',
    ];
    const said = await outcome(pipeClients(sh('sleep 0.5; head -c 25000000 /dev/zero'), ['ssh', ssh], 'carrying'));
    expect(said).toMatch(
      /^carrying failed \(exit 255, SIGTERM\): ssh: connect to host 127\.0\.0\.1 port 1: Connection refused$/,
    );
  });

  it('reads the rest of the source when the sink ended well (a tar at its end-of-archive): the pipe succeeds', async () => {
    const said = await outcome(
      pipeClients(
        sh('head -c 1000 /dev/zero; sleep 0.5; head -c 1000000 /dev/zero'),
        sh('head -c 1000 >/dev/null'),
        'carrying',
      ),
    );
    expect(said).toBe('done');
  });

  it('fails naming both ends when the source fails', async () => {
    const said = await outcome(pipeClients(sh('echo cut >&2; exit 255'), sh('cat >/dev/null'), 'carrying'));
    expect(said).toBe('carrying failed (exit 255, 0): cut');
  });
});
