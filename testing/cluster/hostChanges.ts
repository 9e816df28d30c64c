/**
 * What a real worker (testing/cluster/kubelet.ts) changes on this machine outside its own folder, recorded before it
 * starts and put back after it stops: the kernel settings the kubelet sets at every start (vm.overcommit_memory=1,
 * kernel.panic=10, kernel.panic_on_oops=1), the folders it and containerd write at fixed paths (/var/lib/kubelet,
 * /var/log/containers, /var/log/pods, /var/lib/cni, /run/containerd: removed when they were not there before, else
 * only the entries made since), the network namespaces of its pods (/run/netns/cni-*) and its cgroups.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/** The kernel settings the kubelet sets, by their /proc/sys path. */
const KUBELET_SYSCTLS = ['vm/overcommit_memory', 'kernel/panic', 'kernel/panic_on_oops'];

/** The fixed folders the kubelet, containerd and the CNI plugins write besides the ones a worker is given. */
const FIXED_FOLDERS = ['/var/lib/kubelet', '/var/log/containers', '/var/log/pods', '/var/lib/cni', '/run/containerd'];

/** Where the CNI plugins' network namespaces are mounted (containerd's `cni-<id>`). */
const NETNS_DIR = '/run/netns';

/** util-linux's umount. */
const UMOUNT = '/usr/bin/umount';

/** What the machine held before the worker started. */
export interface HostState {
  sysctls: Record<string, string>;
  /** Each fixed folder's entries, or null when it was not there. */
  folders: Record<string, string[] | null>;
  netns: string[];
}

const entries = (dir: string): string[] | null => (fs.existsSync(dir) ? fs.readdirSync(dir) : null);

/** Records the settings and folders a worker changes. */
export function recordHostState(): HostState {
  return {
    sysctls: Object.fromEntries(
      KUBELET_SYSCTLS.map((key) => [key, fs.readFileSync(path.join('/proc/sys', key), 'utf8').trim()]),
    ),
    folders: Object.fromEntries(FIXED_FOLDERS.map((dir) => [dir, entries(dir)])),
    netns: entries(NETNS_DIR) ?? [],
  };
}

/** Unmounts every mount at or under `dir` (deepest first), lazily, so that the folder can be removed. */
export function unmountUnder(dir: string): void {
  const mounts = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => !!point && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) execFileSync(UMOUNT, ['-l', point], { stdio: 'ignore' });
}

/**
 * Makes the cgroup `name` in each v1 hierarchy (the kubelet's `cgroupRoot` must be there), its cpuset given its
 * parent's processors and memory nodes (a new v1 cpuset has none).
 */
export function makeCgroup(name: string): void {
  const root = '/sys/fs/cgroup';
  for (const hierarchy of fs.readdirSync(root)) {
    const parent = path.join(root, hierarchy);
    if (fs.lstatSync(parent).isSymbolicLink() || !fs.statSync(parent).isDirectory()) continue;
    const dir = path.join(parent, name);
    fs.mkdirSync(dir, { recursive: true });
    if (hierarchy === 'cpuset') {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        fs.writeFileSync(path.join(dir, file), fs.readFileSync(path.join(parent, file), 'utf8').trim());
      }
    }
  }
}

/** Removes the cgroup `name` (a folder in each v1 hierarchy, and what the kubelet made under it), deepest first. */
export function removeCgroup(name: string): void {
  const root = '/sys/fs/cgroup';
  if (!fs.existsSync(root)) return;
  const removeTree = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) removeTree(path.join(dir, entry.name));
    }
    fs.rmdirSync(dir);
  };
  for (const hierarchy of fs.readdirSync(root)) {
    const dir = path.join(root, hierarchy, name);
    if (fs.existsSync(dir) && !fs.lstatSync(path.join(root, hierarchy)).isSymbolicLink()) {
      try {
        removeTree(dir);
      } catch {
        // A cgroup still holding a process cannot go: left for the machine (reported by nothing else).
      }
    }
  }
}

/** Puts back the kernel settings and removes what the worker left in the fixed folders and network namespaces. */
export function restoreHostState(before: HostState): void {
  for (const [key, value] of Object.entries(before.sysctls)) fs.writeFileSync(path.join('/proc/sys', key), value);
  for (const name of (entries(NETNS_DIR) ?? []).filter((n) => n.startsWith('cni-') && !before.netns.includes(n))) {
    const file = path.join(NETNS_DIR, name);
    unmountUnder(file);
    fs.rmSync(file, { force: true });
  }
  for (const [dir, had] of Object.entries(before.folders)) {
    if (!fs.existsSync(dir)) continue;
    unmountUnder(dir);
    if (had === null) fs.rmSync(dir, { recursive: true, force: true });
    else
      for (const name of fs.readdirSync(dir).filter((n) => !had.includes(n))) {
        fs.rmSync(path.join(dir, name), { recursive: true, force: true });
      }
  }
}
