/**
 * Every node of a stack at a glance: the rows as a table, the release read from what a node says or from what is
 * deployed, and the verdict of the whole stack.
 */
import {
  deployedRelease,
  FleetRow,
  fleetHealthy,
  fleetTable,
  releaseOfClientVersion,
} from '../../core/operations/fleet';

const writer: FleetRow = {
  node: 'writer',
  type: 'writer',
  path: 'kubernetes',
  release: '24.1.0',
  service: 'Running',
  running: true,
  peers: 3,
  head: 1234,
  behind: 0,
  permissioned: true,
  companionsUp: 2,
  companions: 2,
};
const validator: FleetRow = {
  node: 'validator-1',
  type: 'validator',
  path: 'ssh',
  service: 'unreachable',
  problem:
    'node validator-1: cannot reach root@190.113.0.7:22 over SSH: ssh: connect to host 190.113.0.7 port 22: Connection refused',
  running: false,
  companionsUp: 0,
  companions: 2,
};
const bootnode: FleetRow = {
  ...writer,
  permissioned: false,
  node: 'boot',
  type: 'bootnode',
  path: 'ssh',
  service: 'started',
  companions: 0,
  companionsUp: 0,
};

describe('every node at a glance', () => {
  it('prints one aligned line per node, unknown values as -', () => {
    expect(fleetTable([writer, validator, bootnode])).toEqual([
      'NODE         TYPE       PATH        RELEASE  SERVICE      PEERS  HEAD  BEHIND  PERMISSIONED  COMPANIONS',
      'writer       writer     kubernetes  24.1.0   Running      3      1234  0       yes           2/2 up',
      'validator-1  validator  ssh         -        unreachable  -      -     -       -             -',
      'boot         bootnode   ssh         24.1.0   started      3      1234  0       no            -',
      // Why a node could not be looked at: below the table, one line each, never inside a cell.
      validator.problem,
    ]);
  });

  it('is healthy only when every node runs with all its companions', () => {
    expect(fleetHealthy([writer, bootnode])).toBe(true);
    expect(fleetHealthy([writer, validator])).toBe(false);
    expect(fleetHealthy([{ ...writer, companionsUp: 1 }])).toBe(false);
  });

  it('reads the release from what the node says, or from what is deployed', () => {
    expect(releaseOfClientVersion('besu/v24.1.0/linux-x86_64/openjdk-java-17')).toBe('24.1.0');
    expect(releaseOfClientVersion('besu/org-writer/v25.5.0/linux-x86_64/openjdk-java-21')).toBe('25.5.0');
    expect(deployedRelease('24.1.0 (the release in use, releases/besu-24.1.0)')).toBe('24.1.0');
    expect(deployedRelease(`hyperledger/besu:24.1.0@sha256:${'a'.repeat(64)} (the pod's image)`)).toBe('24.1.0');
  });
});
