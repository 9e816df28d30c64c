/**
 * What `npm run node -- check` tells a node that fails: one that only waits for its permissioning is not told to
 * restart (a restart cannot permission it), any other failure is; and the clock line never reads `-0.0`, nor
 * "synchronised" when NTP does not keep it so.
 */
import type { CauseObservations } from '../../core/operations/causes';
import { noPeerVerdicts } from '../../core/operations/causes';
import {
  AWAITING_PERMISSIONING_RECOVERY,
  awaitingPermissioning,
  evaluateHealth,
  Observations,
} from '../../core/operations/health';
import { MAX_CLOCK_OFFSET_SECONDS } from '../../core/catalog/health';
import { FIXES, healthyObservations } from '../../testing/fixtures';

const ENODE = `enode://${'ab'.repeat(64)}@203.0.113.10:60606`;
/** A node the contract does not know yet: no peers, so no blocks, nothing imported. */
const unpermissioned: Observations = {
  ...healthyObservations(ENODE),
  peerCount: 0,
  blockSecond: 10,
  lastImportAgeSeconds: undefined,
  causes: {
    peers: 0,
    syncing: false,
    enodeIp: '203.0.113.10',
    permissioning: { head: { block: 500, allowed: 0, of: 2 } },
    tcp: 'open',
    udp: 'no refusal',
    clock: { offsetSeconds: -0.04, synchronised: true },
  },
};

describe('check on a node that is only not yet permissioned', () => {
  it('fails it, names the request, and says a restart cannot help', () => {
    const verdicts = evaluateHealth(unpermissioned, FIXES);
    expect(verdicts.filter((v) => !v.ok).map((v) => v.check)).toEqual([
      'peers',
      'block sync',
      'permissioning',
      'block imports',
    ]);
    expect(verdicts.find((v) => v.check === 'permissioning')!.fix).toBe(FIXES.request);
    expect(awaitingPermissioning(verdicts)).toBe(true);
    expect(AWAITING_PERMISSIONING_RECOVERY).toMatch(
      /^recovery: the node is not yet permissioned, which a restart cannot/,
    );
    expect(AWAITING_PERMISSIONING_RECOVERY).not.toMatch(/--fix|restart the node/);
  });

  it.each<[string, Partial<Observations>, Partial<CauseObservations>]>([
    ['its service is down', { service: { running: false, detail: 'inactive' } }, {}],
    ['its port is closed', {}, { tcp: 'refused' }],
    ['its clock is off', {}, { clock: { offsetSeconds: MAX_CLOCK_OFFSET_SECONDS + 1, synchronised: false } }],
    ['it answers with another key', { reportedEnode: `enode://${'cd'.repeat(64)}@203.0.113.10:60606` }, {}],
  ])('and %s: the usual recovery (a restart may help)', (_, observed, causes) => {
    const verdicts = evaluateHealth(
      { ...unpermissioned, ...observed, causes: { ...unpermissioned.causes!, ...causes } },
      FIXES,
    );
    expect(awaitingPermissioning(verdicts)).toBe(false);
  });

  it('a permissioned node that fails is not taken for one waiting', () => {
    const verdicts = evaluateHealth(
      {
        ...unpermissioned,
        causes: { ...unpermissioned.causes!, permissioning: { head: { block: 500, allowed: 2, of: 2 } } },
      },
      FIXES,
    );
    expect(verdicts.some((v) => !v.ok)).toBe(true);
    expect(awaitingPermissioning(verdicts)).toBe(false);
  });
});

describe("check's clock line", () => {
  const clockLine = (offsetSeconds: number, synchronised?: boolean) =>
    noPeerVerdicts({ ...unpermissioned.causes!, clock: { offsetSeconds, synchronised } }, FIXES).find(
      (v) => v.check === 'clock',
    )!;

  it('shows an offset that rounds to nothing as 0.0, never -0.0', () => {
    expect(clockLine(-0.04, true)).toEqual({
      check: 'clock',
      ok: true,
      detail: "0.0 s from this machine's, synchronised",
    });
    expect(clockLine(0.04).detail).toBe("0.0 s from this machine's");
    expect(clockLine(-1.46, true).detail).toBe("-1.5 s from this machine's, synchronised");
    expect(clockLine(2, true).detail).toBe("+2.0 s from this machine's, synchronised");
  });

  it('within the bound but not synchronised: ok for now, saying it drifts and how to synchronise it', () => {
    expect(clockLine(-0.01, false)).toEqual({
      check: 'clock',
      ok: true,
      detail: `0.0 s from this machine's, within ${MAX_CLOCK_OFFSET_SECONDS} s for now, but not synchronised (NTP), so it drifts: ${FIXES.clock}`,
    });
  });
});
