/**
 * `npm run bench -- --only cuts`: the whole cut matrix (testing/cuts/cases.ts) on the real SSH test host: every remote
 * step of a first install and of the upgrades 23.4.1 -> 24.1.0 -> 25.5.0 cut at evenly spread moments (its SSH
 * connection dropped), the machine stopped hard during each upgrade's release switch and start, and dpkg cut while it
 * has packages half installed; each recovered by running the change again and judged by the invariants
 * (testing/cuts/invariants.ts). The test tier runs a fixed sample of it (tests/e2e/cuts.test.ts).
 * LACCHAIN_CUTS_CHANGES: a comma-separated list of change names (as the table names them, e.g. "upgrade 23.4.1 ->
 * 24.1.0,backup on 24.1.0") runs only those.
 */

import { changeName, CutCase, CutLab, CutResult, momentName } from '../testing/cuts/lab';
import type { CutKind } from '../testing/cuts/cut';
import {
  casesOf,
  CHANGES,
  DISK_FULL,
  DPKG_AT_WORK,
  MACHINE_MOMENTS_PER_STEP,
  MOMENTS_PER_STEP,
  OPERATIONS,
  RELEASES,
} from '../testing/cuts/cases';
import { fixed, machine, median, now, PartResult, progress, table, withoutTestHosts } from './common';

const HOST_NAME = 'benchcuts';
const KIND_NAMES: Record<CutKind, string> = {
  ssh: 'connection dropped',
  machine: 'machine stopped hard',
  disk: 'disk full',
};
const HOST_INDEX = 49;
const HEADING = '## Cut anywhere: the fault-injection matrix on the real SSH test host (bench/cuts.ts)';

export async function benchCuts(): Promise<PartResult> {
  const skipped = await withoutTestHosts('cuts', HEADING);
  if (skipped) return skipped;
  const started = Date.now();
  const lab = await CutLab.open(HOST_NAME, HOST_INDEX, RELEASES);
  const results: CutResult[] = [];
  try {
    const only = process.env.LACCHAIN_CUTS_CHANGES?.split(',').map((name) => name.trim());
    for (const change of [...CHANGES, ...OPERATIONS].filter((c) => !only || only.includes(changeName(c)))) {
      progress(`cuts: ${changeName(change)}: the uncut run`);
      const reference = await lab.reference(change);
      const cases: CutCase[] = casesOf(reference);
      if (change.before.length === 0) cases.push({ change, step: 'packages', kind: 'ssh', at: DPKG_AT_WORK });
      cases.push(...DISK_FULL.filter((disk) => changeName(disk.change) === changeName(change)));
      for (const [i, cutCase] of cases.entries()) {
        // A cut the harness itself could not carry out (a host that did not come back) is reported, and the matrix
        // goes on.
        const result = await lab.cut(reference, cutCase).catch((error: Error): CutResult => ({
          case: cutCase,
          cutInside: true,
          brokenAtCut: [],
          brokenAfterRecovery: [`the harness failed: ${error.message.split('\n').slice(0, 3).join(' ')}`],
          recoverySeconds: 0,
        }));
        results.push(result);
        const broken = [...result.brokenAtCut, ...result.brokenAfterRecovery];
        progress(
          `cuts: ${changeName(change)} ${i + 1}/${cases.length}: ${cutCase.step} ${momentName(cutCase.at)} ` +
            `(${cutCase.kind}): ${broken.length === 0 ? 'kept' : `BROKEN: ${broken.join('; ')}`}; ` +
            `recovered in ${fixed(result.recoverySeconds, 1)} s${result.cutInside ? '' : ' (the step ended first)'}`,
        );
      }
    }
  } finally {
    await lab.close();
  }
  return { name: 'cuts', markdown: report(results, (Date.now() - started) / 1000, await machine()) };
}

function report(results: CutResult[], seconds: number, machineLine: string): string {
  const groups = new Map<string, CutResult[]>();
  for (const result of results) {
    const key = `${changeName(result.case.change)}|${result.case.step}|${result.case.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), result]);
  }
  const rows = [...groups.entries()].map(([key, group]) => {
    const [change, step, kind] = key.split('|');
    const recovery = group.map((r) => r.recoverySeconds);
    return [
      change,
      step,
      KIND_NAMES[kind as CutKind],
      group.length,
      group.filter((r) => r.cutInside).length,
      group.filter((r) => r.brokenAtCut.length > 0).length,
      group.filter((r) => r.brokenAfterRecovery.length > 0).length,
      fixed(median(recovery), 1),
      fixed(Math.max(...recovery), 1),
    ];
  });
  const broken = results.filter((r) => r.brokenAtCut.length + r.brokenAfterRecovery.length > 0);
  const allRecovery = results.map((r) => r.recoverySeconds);
  return [
    HEADING,
    '',
    `Measured ${now()} on ${machineLine}; ${results.length} cuts in ${fixed(seconds / 60, 1)} min. Each cut on a host`,
    'booted for it (Debian 12 in systemd-nspawn: real systemd, sshd, apt and dpkg, nginx, nftables, openssl; the Besu',
    "stand-in and the companions' stand-ins, not Besu), in the state before the change (a saved disk), the steps before",
    `the cut step run, the cut step cut at ${MOMENTS_PER_STEP} moments evenly spread over its uncut time (an SSH cut kills`,
    "the step user's SSH sessions at once), or the machine stopped hard at",
    `${MACHINE_MOMENTS_PER_STEP} moments of an upgrade's release switch and start (every process of the host killed, then`,
    'booted again on the same disk, its page cache kept; the preflight, which only reads the machine, is not cut), then',
    'the recovery docs/operations.md gives: `pulumi up` again, which runs the cut command and the ones after it',
    "(replayed over SSH as the command provider runs them); an operator's backup, restore and rollback cut at their",
    'own moment and run again; and a disk that fills up (the releases folder while an upgrade unpacks, the backup',
    'repository while a backup copies: the folder on a small tmpfs of its own, less free than what is written), where',
    'the step or command must fail by itself saying the disk is full and leave nothing there; then room is made and it',
    'runs again ("inside the step" counts the cuts that fell inside it, or the disk-full runs that failed). Invariants',
    '(testing/cuts/invariants.ts), at the cut: every tracked file is its content before or after the change, the key file',
    "is the stack's and 600, the release link complete, config.toml parses, nothing reachable from outside beyond the",
    "final state; after the recovery: the files are the uncut change's, the node answers with the stack's enode, its",
    'head is not below its head before the change, and Besu never met data newer than its release.',
    '',
    table(
      [
        'change',
        'step',
        'cut',
        'cuts',
        'inside the step',
        'broken at the cut',
        'broken after recovery',
        'recovery median (s)',
        'worst (s)',
      ],
      rows,
    ),
    '',
    `Recovery over all cuts: median ${fixed(median(allRecovery), 1)} s, worst ${fixed(Math.max(...allRecovery), 1)} s`,
    '(the re-run of the cut step and the ones after it, and the node answering again).',
    '',
    broken.length === 0
      ? 'Invariants broken: none.'
      : [
          'Invariants broken:',
          '',
          ...broken.map(
            (r) =>
              `- ${changeName(r.case.change)}, ${r.case.step} ${momentName(r.case.at)} (${r.case.kind}): ` +
              [...r.brokenAtCut.map((b) => `at the cut: ${b}`), ...r.brokenAfterRecovery].join('; '),
          ),
        ].join('\n'),
    '',
  ].join('\n');
}
