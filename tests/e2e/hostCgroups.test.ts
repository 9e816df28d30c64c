/**
 * The test hosts are machines of their own to systemd (testing/host/common.sh, lct_cgroup_dirs): each boots in a cgroup
 * of its own, so each host's units hold only that host's processes and its systemd can kill all of them. Booted from
 * one cgroup, hosts shared every unit's cgroup (payload/system.slice/besu.service held every host's Besu), and a host's
 * systemd, finding the other hosts' processes there, gave up killing its own: a unit's child that ignored SIGTERM
 * outlived the unit's stop, untracked ("Failed to kill control group …: Input/output error").
 */
import * as fs from 'fs';
import { execFileSync } from 'child_process';
import { hostSuite } from '../../testing/hostSuite';
import { startTestHost, TestHost } from '../../testing/host/testHost';
import { processesRunning } from '../../testing/host/localProcesses';
import { requireTestHosts } from '../../testing/releaseHost';

const suite = hostSuite('test hosts in cgroups of their own');
jest.setTimeout(3 * 60 * 1000);

/** The unit both hosts run: a child that ignores SIGTERM (as a slow-to-stop process does) under a main process. */
const UNIT = 'cgroup-witness';
/** The child's command line, one no other test uses. */
const CHILD = `sleep 99998.${process.pid}`;
const START = `systemd-run --unit=${UNIT} -p TimeoutStopSec=2 bash -c '(trap "" TERM; exec ${CHILD}) & exec sleep 99997'`;

/** This machine's processes running the child, by pid. */
const children = () => processesRunning(CHILD);

/** The cgroups (one line per hierarchy) a process of this machine is in. */
function cgroupsOf(pid: number | string): string {
  return fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8');
}

suite('each test host has a cgroup of its own', () => {
  let first: TestHost;
  let second: TestHost;

  beforeAll(async () => {
    await requireTestHosts();
    [first, second] = await Promise.all([startTestHost('cgroupa', 231), startTestHost('cgroupb', 232)]);
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it("boots each host in its own cgroup, and a unit's stop kills every process of that unit on that host only", async () => {
    expect(cgroupsOf(first.pid)).toMatch(/^0::\/lacchain-test-host-cgroupa\//m);
    expect(cgroupsOf(second.pid)).toMatch(/^0::\/lacchain-test-host-cgroupb\//m);
    // The same unit on both, the second host's started first (its processes then come first in a shared cgroup).
    expect((await second.ssh(START)).code).toBe(0);
    expect((await first.ssh(START)).code).toBe(0);
    for (let i = 0; i < 100 && children().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    const before = children();
    expect(before).toHaveLength(2);
    const ofFirst = before.filter((pid) => cgroupsOf(pid).includes('/lacchain-test-host-cgroupa/'));
    expect(ofFirst).toHaveLength(1);

    const stopped = await first.ssh(`systemctl stop ${UNIT}; journalctl --no-pager -u ${UNIT} -o cat`);
    expect(stopped.code).toBe(0);
    // The child that ignored SIGTERM is killed when the stop times out, as on a machine of its own.
    expect(stopped.stdout).toMatch(/Killing process \d+ \(sleep\) with signal SIGKILL/);
    expect(stopped.stdout).not.toMatch(/Failed to kill control group/);
    expect(children()).toEqual(before.filter((pid) => !ofFirst.includes(pid)));
    // The second host's unit is its own: still running.
    expect((await second.ssh(`systemctl is-active ${UNIT}`)).stdout.trim()).toBe('active');
  });

  it('removes the cgroup of a host that stopped', async () => {
    await first.stop();
    const left = execFileSync(
      'sh',
      [
        '-c',
        'ls -d /sys/fs/cgroup/lacchain-test-host-cgroupa /sys/fs/cgroup/*/lacchain-test-host-cgroupa 2>/dev/null || true',
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(left).toBe('');
  });
});
