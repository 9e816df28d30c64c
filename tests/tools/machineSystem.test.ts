/**
 * What init reads from a machine it does not trust yet (cli/init/machineSystem.ts: `cat /etc/os-release` over SSH,
 * before anything is deployed), with a stand-in `ssh` first on the PATH that answers as a hostile machine would:
 * terminal escape sequences in what it says, and an answer without end. Neither reaches the operator's terminal raw,
 * and neither is read without a bound. And every ssh the tools open forwards nothing of the operator's machine.
 */
import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { sshArguments } from '../../core/operations/clients';
import { PROJECT_DIR } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

const dir = workFolder('lacchain-machine-system-');
const calls = path.join(dir, 'calls');
const MACHINE = {
  host: '190.51.100.7',
  port: 22,
  user: 'ubuntu',
  hostKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFake',
};

/**
 * Runs init's read of MACHINE in a child process whose PATH starts with a stand-in ssh running `body` (sh) and
 * recording its arguments; gives what the read gives and how long it took.
 */
function readWithSsh(body: string): { result: unknown; ms: number } {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'ssh'), `#!/bin/sh\nprintf '%s\\n' "$*" >>${calls}\n${body}\n`, { mode: 0o755 });
  const script = `const started = Date.now();
require('./cli/init/machineSystem').readMachineSystem(${JSON.stringify(MACHINE)})
  .then((result) => process.stdout.write(JSON.stringify({ result, ms: Date.now() - started })));`;
  const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: PROJECT_DIR,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
    timeout: 60_000,
  });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout);
}
afterEach(() => fs.rmSync(calls, { force: true }));
jest.setTimeout(60_000);

describe("init's read of a machine not yet trusted", () => {
  it('shows what the machine said without its escape sequences (no title, no cursor, no clipboard)', () => {
    const { result } = readWithSsh(
      String.raw`printf 'Permission denied \033]0;owned\007\033[2K\033]52;c;ZWNobyBoaQ==\007(publickey).\033[31m\n' >&2; exit 255`,
    );
    expect(result).toEqual({ reason: 'Permission denied (publickey).' });
  });

  it('stops reading an answer without end, and says so', () => {
    const { result, ms } = readWithSsh('yes ID=debian; exit 0');
    expect((result as { reason: string }).reason).toMatch(
      /^ssh \(cat \/etc\/os-release\) answered more than 65536 bytes: stopped reading it/,
    );
    // Stopped by the bound, not by init's 10 s wait for an answer (which would say nothing of the size).
    expect(ms).toBeLessThan(10_000);
  });

  it('forwards neither the agent nor any port, before the options of ~/.ssh/config could', () => {
    expect(readWithSsh(`printf 'ID=debian\\nVERSION_ID="12"\\n'`).result).toEqual({ system: 'debian 12' });
    const args = fs.readFileSync(calls, 'utf8');
    expect(args).toMatch(
      /^-o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=4 -o ForwardAgent=no -o ClearAllForwardings=yes /,
    );
  });

  it('lets no ~/.ssh/config forward X, tunnel, delegate Kerberos credentials or carry it over a master connection', () => {
    // The real ssh resolves init's arguments against an operator's config asking for all of it (ssh -G: no connection).
    fs.writeFileSync(OPERATOR_CONFIG, HOSTILE_CONFIG);
    readWithSsh(`/usr/bin/ssh -G -F ${OPERATOR_CONFIG} "$@" >${RESOLVED}; exit 255`);
    expect(resolvedOptions(fs.readFileSync(RESOLVED, 'utf8'))).toEqual(NOTHING_HANDED_OVER);
    // No ControlPath at all: a connection of its own (ssh -G prints none for "none").
    expect(fs.readFileSync(RESOLVED, 'utf8')).not.toMatch(/^controlpath /m);
  });
});

describe("npm run node's ssh", () => {
  it("lets no ~/.ssh/config forward X, tunnel or delegate Kerberos credentials; its master is the command's own", () => {
    fs.writeFileSync(OPERATOR_CONFIG, HOSTILE_CONFIG);
    const shared = path.join(dir, 'connection');
    const args = sshArguments({ options: [], knownHostsFile: '/dev/null', sharedConnection: shared });
    const result = spawnSync('/usr/bin/ssh', ['-G', '-F', OPERATOR_CONFIG, ...args, '-p', '22', 'u@h', 'true'], {
      encoding: 'utf8',
    });
    expect(resolvedOptions(result.stdout)).toEqual({ ...NOTHING_HANDED_OVER, controlmaster: 'auto' });
    expect(result.stdout).toMatch(new RegExp(`^controlpath ${shared}$`, 'm'));
  });
});

/** An operator's ~/.ssh/config that hands over everything it can. */
const OPERATOR_CONFIG = path.join(dir, 'operator-ssh-config');
const RESOLVED = path.join(dir, 'resolved');
const HOSTILE_CONFIG = `Host *
  ForwardAgent yes
  ForwardX11 yes
  ForwardX11Trusted yes
  GSSAPIAuthentication yes
  GSSAPIDelegateCredentials yes
  Tunnel yes
  ControlMaster auto
  ControlPath /tmp/master-%r@%h:%p
  LocalForward 8080 localhost:80
`;
const NOTHING_HANDED_OVER = {
  forwardagent: 'no',
  forwardx11: 'no',
  forwardx11trusted: 'no',
  gssapidelegatecredentials: 'no',
  tunnel: 'false',
  controlmaster: 'false',
  localforward: undefined,
};

/** The options of `ssh -G`'s output that hand something of the operator's machine over, by name. */
function resolvedOptions(text: string): Record<string, string | undefined> {
  const value = (name: string) => new RegExp(`^${name} (.*)$`, 'm').exec(text)?.[1];
  return Object.fromEntries(Object.keys(NOTHING_HANDED_OVER).map((name) => [name, value(name)]));
}
