/**
 * The operating systems a remote node may run on, as the preflight step decides (scripts/remote/preflight.sh reads
 * SUPPORTED_SYSTEMS, made from this list), and how each is tested: docs/ssh.md's table of systems says the same.
 */

import type { NodeType } from './nodeTypes';

/** How a system is tested here. */
export type SystemTesting =
  /** A real host of that system boots here and the end-to-end tier installs, updates, backs up and restores on it. */
  | 'real host'
  /** Not to be had here as a host: its os-release runs through the preflight's decisions (tests/tools). */
  | 'preflight decisions';

/** One family of systems: its os-release ID (and IDs that are the same system), the versions accepted, how tested. */
export interface SupportedSystem {
  /** `ID` of /etc/os-release; `aliases`: other IDs of the same family (a rebuild of RHEL). */
  id: string;
  aliases?: readonly string[];
  /** What operators call it. */
  name: string;
  /** `VERSION_ID`s accepted (the major version for the RHEL family); empty: any. */
  versions: readonly string[];
  /** How each version is tested; a version not listed: from its preflight decisions. */
  tested: Readonly<Record<string, SystemTesting>>;
  /** Why a node type may not run there, when one may not. */
  limits?: string;
  /** The node types the packages step refuses there (`limits` says why). */
  refuses?: readonly NodeType[];
  /** Whether the version is the whole VERSION_ID (22.04, 13) or its major number only (9.4 is 9). */
  byMajor?: boolean;
}

/** The systems operators run in 2026 (the old ones kept where nothing breaks on them). */
export const SUPPORTED_SYSTEMS: readonly SupportedSystem[] = [
  {
    id: 'ubuntu',
    name: 'Ubuntu',
    versions: ['16.04', '18.04', '20.04', '22.04', '24.04', '26.04'],
    tested: {},
  },
  {
    id: 'debian',
    name: 'Debian',
    versions: ['10', '11', '12', '13'],
    tested: { '12': 'real host', '13': 'real host' },
  },
  {
    id: 'rhel',
    aliases: ['rocky', 'almalinux'],
    name: 'RHEL, Rocky Linux, AlmaLinux',
    versions: ['9', '10'],
    tested: {},
    limits:
      'a writer is refused (its package sources have no Lua module for nginx, which the gas-model routing needs): validators and bootnodes only',
    refuses: ['writer'],
    byMajor: true,
  },
  {
    id: 'centos',
    name: 'CentOS',
    versions: ['7', '8'],
    tested: {},
    limits: 'out of support since 2024: validators and bootnodes only, as on RHEL',
    refuses: ['writer'],
    byMajor: true,
  },
];

/**
 * The system an os-release `ID` and `VERSION_ID` name, when the preflight step accepts it (the same decision as
 * scripts/remote/preflight.sh: Ubuntu and Debian by their whole VERSION_ID, the RHEL family by its major number).
 */
export function supportedSystem(id: string, version: string): SupportedSystem | undefined {
  const family = SUPPORTED_SYSTEMS.find((s) => s.id === id || (s.aliases ?? []).includes(id));
  if (!family) return undefined;
  return family.versions.includes(family.byMajor ? version.split('.')[0] : version) ? family : undefined;
}

/** The list as the preflight step takes it: `id[,alias...]=version,version` per family, separated by spaces. */
export function supportedSystemsParameter(): string {
  return SUPPORTED_SYSTEMS.map((s) => `${[s.id, ...(s.aliases ?? [])].join(',')}=${s.versions.join(',')}`).join(' ');
}

/** The list in words, for messages: `Ubuntu 18.04, 20.04, …; Debian 11, 12, 13; …`. */
export function supportedSystemsText(): string {
  return SUPPORTED_SYSTEMS.map((s) => `${s.name} ${s.versions.join(', ')}`).join('; ');
}

/** The list by os-release IDs, as an inventory's `os` names them: `ubuntu 16.04, …; rhel, rocky or almalinux 9, 10; …`. */
export function supportedSystemIdsText(): string {
  return SUPPORTED_SYSTEMS.map((s) => {
    const ids = [s.id, ...(s.aliases ?? [])];
    const named = ids.length > 1 ? `${ids.slice(0, -1).join(', ')} or ${ids[ids.length - 1]}` : ids[0];
    return `${named} ${s.versions.join(', ')}`;
  }).join('; ');
}
