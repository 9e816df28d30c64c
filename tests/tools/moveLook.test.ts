/**
 * The look at the old machine after a move ended in its stop (scripts/remote/move.sh's `look`, docs/moving.md): what
 * it says for each state the leave action can be cut in, run here with bash against a throwaway folder; systemctl is a
 * stand-in (a PATH of one small script saying what each unit is and which drop-ins systemd loaded), everything else
 * is the real script, read by the tool as `stopReachedOnMachine`.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { MACHINE_MOVE_FILES } from '../../core/catalog/move';
import { stepCommand, stepInput, stepScript } from '../../core/remote/shell';
import { moveParameters } from '../../cli/operations/move';
import { StopReached, stopReachedOnMachine } from '../../cli/operations/moveStopReached';
import type { SshNodeSettings } from '../../core/settings/model';
import { workFolder } from '../../testing/workFolder';

const work = workFolder('lacchain-move-look-');
const node = { serviceName: 'besu', companions: [{ name: 'ethstats' }] } as unknown as SshNodeSettings;
const UNITS = ['besu', 'besu-ethstats'];
/** The drop-in systemd has loaded for a unit once the leave action's daemon-reload ran. */
const loadedDropIn = (unit: string) => `/etc/systemd/system/${unit}.service.d/${MACHINE_MOVE_FILES.dropIn}`;

/** What the stand-in systemctl says: each unit's state, and the drop-ins it loaded. */
interface Units {
  active: Record<string, string>;
  dropIns: Record<string, string[]>;
}

let cases = 0;
/** Runs move.sh's look as the tool does (a step, its parameters), the moved-out record there or not. */
function look(units: Units, movedOut: boolean): { said: string; reached: StopReached } {
  const dir = path.join(work, `case-${++cases}`);
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const movedOutFile = path.join(dir, 'besu-moved-out');
  if (movedOut) fs.writeFileSync(movedOutFile, 'moved-to=root@10.0.0.9:22\n');
  const answers = [
    ...UNITS.map(
      (unit) =>
        `is-active\\ ${unit}) echo ${units.active[unit] ?? 'inactive'}; [ "${units.active[unit]}" = active ] ;;`,
    ),
    ...UNITS.map(
      (unit) =>
        `show\\ -p\\ DropInPaths\\ --value\\ ${unit}.service) echo '${(units.dropIns[unit] ?? []).join(' ')}' ;;`,
    ),
  ];
  fs.writeFileSync(
    path.join(bin, 'systemctl'),
    `#!/bin/sh\necho "$*" >>${dir}/systemctl.log\ncase "$*" in\n${answers.join('\n')}\n*) exit 1 ;;\nesac\n`,
    { mode: 0o755 },
  );
  const env = { ...moveParameters(node, 'look'), MOVED_OUT_FILE: movedOutFile };
  const result = spawnSync('sh', ['-c', stepCommand('root')], {
    input: stepInput('test: move look', env, stepScript('remote/move.sh')),
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    timeout: 60_000,
  });
  expect([result.status, result.stderr]).toEqual([0, '']);
  // It only looks: nothing but is-active and show was asked of systemd.
  const asked = fs.readFileSync(path.join(dir, 'systemctl.log'), 'utf8').trim().split('\n');
  expect(asked.filter((line) => !/^(is-active|show -p DropInPaths --value) /.test(line))).toEqual([]);
  return { said: result.stdout, reached: stopReachedOnMachine(result.stdout) };
}

const allLoaded = Object.fromEntries(UNITS.map((unit) => [unit, [`/usr/lib/x.conf`, loadedDropIn(unit)]]));

describe("move.sh look: how far the old machine's stop got", () => {
  it.each<[string, StopReached, Units, boolean]>([
    ['nothing done yet: the node runs', 'running', { active: { besu: 'active' }, dropIns: {} }, false],
    ['fenced, not yet stopped: the node runs', 'running', { active: { besu: 'active' }, dropIns: allLoaded }, true],
    [
      'a companion still stopping',
      'running',
      { active: { 'besu-ethstats': 'deactivating' }, dropIns: allLoaded },
      true,
    ],
    ['restarting by itself', 'running', { active: { besu: 'activating' }, dropIns: allLoaded }, true],
    ['stopped, the moved-out record and every drop-in loaded: kept', 'kept', { active: {}, dropIns: allLoaded }, true],
    ['stopped, the drop-ins loaded but no moved-out record', 'stopped', { active: {}, dropIns: allLoaded }, false],
    ['stopped, the record written, no drop-in yet', 'stopped', { active: {}, dropIns: {} }, true],
    [
      "stopped, one unit's drop-in written but not loaded (no daemon-reload yet)",
      'stopped',
      { active: { besu: 'failed' }, dropIns: { besu: [loadedDropIn('besu')] } },
      true,
    ],
  ])('%s: %s', (_what, reached, units, movedOut) => {
    const seen = look(units, movedOut);
    expect(seen.said.trim().split('\n').pop()).toBe(`MOVE_OLD_NODE=${reached}`);
    expect(seen.reached).toBe(reached);
  });
});
