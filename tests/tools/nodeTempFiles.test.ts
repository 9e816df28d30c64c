/**
 * `npm run node` leaves no temporary files behind: the known_hosts file of a pinned SSH host key is removed when the
 * command ends, here one that fails (nothing listens on the SSH port).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { sshValidatorEntry, TEST_COMPANIONS } from '../../testing/fixtures';
import { operatorStackFile } from '../../testing/nodeTool';
import { runNpmAsync } from '../../testing/run';

jest.setTimeout(60_000);

it('removes its temporary folder when the command ends', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-tmpfiles-'));
  const tmp = path.join(work, 'tmp');
  fs.mkdirSync(tmp);
  // The SSH key stored as a stack secret: the file holds it encrypted.
  const config = operatorStackFile(work, {
    'lacchain:network': 'open-protestnet',
    'lacchain:nodes': [
      sshValidatorEntry({
        host: '127.0.0.1',
        port: 1,
        host_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHhvc3Qta2V5LW9mLXRoZS12YWxpZGF0b3I',
      }),
    ],
    'lacchain:sshPrivateKey': 'stored',
    'lacchain:companions': structuredClone(TEST_COMPANIONS),
  });
  try {
    const result = await runNpmAsync('node', ['status', '--stack', 'testnet', '--config', config], {
      env: { TMPDIR: tmp },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach root@127.0.0.1:1 over SSH');
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith('lacchain-'))).toEqual([]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});
