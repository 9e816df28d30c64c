/**
 * The test stacks' made-up public addresses (testPublicIp, 200.10.20.0/24) kept on this machine: a local route on lo
 * makes every one of them an address of this machine (as 127.0.0.0/8 is), so a probe, a dial or a listener at one
 * never leaves it, and a stand-in can listen at the very address a node's enode names. Added when a test needs it
 * (idempotent, `ip route replace`); what would still go out is refused by testing/netGuard.js.
 */
import { execFileSync } from 'child_process';

/** The network of testPublicIp's addresses. */
export const TEST_PUBLIC_NETWORK = { prefix: '200.10.20', cidr: '200.10.20.0/24' };

/** Routes TEST_PUBLIC_NETWORK to this machine itself (table local, on lo); throws, saying what to do, when it cannot. */
export function keepTestPublicNetworkHere(): void {
  try {
    execFileSync('ip', ['route', 'replace', 'local', TEST_PUBLIC_NETWORK.cidr, 'dev', 'lo', 'table', 'local'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    throw new Error(
      `could not route the test addresses ${TEST_PUBLIC_NETWORK.cidr} to this machine (run the tests as root): ${(error as Error).message}`,
    );
  }
}
