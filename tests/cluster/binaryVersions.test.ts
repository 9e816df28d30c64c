/**
 * The control plane's binaries report the version they are built from (tools/kubernetes/build.sh sets it at link
 * time, as Kubernetes' own release build does): `kubectl version --client` and `kube-apiserver --version` print the
 * `kubernetes` version of testing/cluster/versions.json, not the `v0.0.0-master+$Format:%H$` of a plain `go build`.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { clusterTools } from '../../testing/cluster/cluster';

const VERSIONS = JSON.parse(fs.readFileSync(path.join(__dirname, '../../testing/cluster/versions.json'), 'utf8'));
const tools = clusterTools();
if ('unavailable' in tools) {
  process.stderr.write(`the binaries' versions not checked: ${tools.unavailable}\n`);
  if (process.env.CI === 'true') throw new Error(`no Kubernetes binaries: ${tools.unavailable}`);
}
const itWithBinaries = 'unavailable' in tools ? it.skip : it;
const run = (binary: string, args: string[]) =>
  spawnSync(path.join((tools as { dir: string }).dir, 'bin', binary), args, { encoding: 'utf8' });

describe("the control plane's binaries", () => {
  const version: string = VERSIONS.kubernetes;
  const [major, minor] = version.replace(/^v/, '').split('.');

  itWithBinaries('kubectl version --client reports the Kubernetes version it is built from', () => {
    const result = run('kubectl', ['version', '--client', '-o', 'json']);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).clientVersion).toMatchObject({ gitVersion: version, major, minor });
  });

  itWithBinaries.each(['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'])(
    '%s --version reports the Kubernetes version it is built from',
    (binary) => {
      const result = run(binary, ['--version']);
      expect([binary, result.status, result.stdout.trim()]).toEqual([binary, 0, `Kubernetes ${version}`]);
    },
  );
});
