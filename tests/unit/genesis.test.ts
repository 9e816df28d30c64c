/**
 * The genesis: read or downloaded, and accepted only with the pinned digest.
 */
import * as http from 'http';
import { AddressInfo } from 'net';
import * as fs from 'fs';
import { GenesisError, loadGenesis, sha256Hex } from '../../core/genesis';
import { NETWORKS } from '../../core/catalog/networks';
import { TEST_GENESIS, TEST_GENESIS_FILE, testGenesisText } from '../../testing/fixtures';

describe('genesis', () => {
  it('the test fixture has the digest the tests pin', () => {
    const bytes = fs.readFileSync(TEST_GENESIS_FILE);
    expect([sha256Hex(bytes), bytes.length]).toEqual([TEST_GENESIS.sha256, TEST_GENESIS.bytes]);
  });

  it('reads a local copy that matches the pinned digest', async () => {
    await expect(loadGenesis(TEST_GENESIS, { file: TEST_GENESIS_FILE })).resolves.toBe(testGenesisText());
  });

  it('refuses a local copy with another digest, showing both digests', async () => {
    const pinned = NETWORKS['open-protestnet'].genesis;
    const attempt = loadGenesis(pinned, { file: TEST_GENESIS_FILE });
    await expect(attempt).rejects.toThrow(GenesisError);
    await expect(attempt).rejects.toThrow(`expected sha256 ${pinned.sha256}, got sha256 ${TEST_GENESIS.sha256}`);
  });

  it('refuses a missing local copy', async () => {
    await expect(loadGenesis(TEST_GENESIS, { file: '/nonexistent/genesis.json' })).rejects.toThrow(/does not exist/);
  });

  describe('download', () => {
    let server: http.Server;
    let base: string;
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        if (req.url === '/good.json') res.end(fs.readFileSync(TEST_GENESIS_FILE));
        else if (req.url === '/tampered.json')
          res.end(fs.readFileSync(TEST_GENESIS_FILE, 'utf8').replace('648999', '648998'));
        else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it('downloads and verifies the pinned file', async () => {
      await expect(loadGenesis({ ...TEST_GENESIS, url: `${base}/good.json` })).resolves.toBe(testGenesisText());
    });
    it('refuses a tampered download', async () => {
      await expect(loadGenesis({ ...TEST_GENESIS, url: `${base}/tampered.json` })).rejects.toThrow(
        /does not match the pinned digest/,
      );
    });
    it('reports an HTTP error', async () => {
      await expect(loadGenesis({ ...TEST_GENESIS, url: `${base}/missing.json` })).rejects.toThrow(/HTTP 404/);
    });
    it('explains what to do without internet', async () => {
      const offline = (() => Promise.reject(new Error('getaddrinfo ENOTFOUND'))) as unknown as typeof fetch;
      await expect(loadGenesis(TEST_GENESIS, { fetch: offline })).rejects.toThrow(/lacchain:genesisFile/);
    });
  });
});
