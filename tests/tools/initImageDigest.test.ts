/**
 * `npm run init` reads the monitoring client's image digest at the operator's request (#53): with podman or docker
 * here (recorded: tests/fixtures/recorded-containers, which also stand for neither being installed), asked on a
 * terminal, `--read-image-digest yes` without one. Without the digest a testnet stack plans with the policy's
 * advisory warning on the machine's tag; mainnet keeps requiring it.
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { ETHSTATS, RELAY_SIGNER } from '../../core/catalog/companions';
import { FAKE_HOST_KEY } from '../../testing/fixtures';
import { PROJECT_DIR, runNpmAsync } from '../../testing/run';
import { workFolder } from '../../testing/workFolder';

jest.setTimeout(120_000);

const work = workFolder('lacchain-init-digest-');
const recorded = (tool: string) => path.join(PROJECT_DIR, 'tests/fixtures', tool);
const IMAGE = ETHSTATS.defaultImage;
const DIGEST = `sha256:${'5e'.repeat(32)}`;
const OTHER_DIGEST = `sha256:${'0f'.repeat(32)}`;

let folders = 0;
/**
 * A project folder, a key folder and the tools' answers: `tools` names the container tools installed here with the
 * RepoDigests each shows of the image, and whether the image is in its store already.
 */
function stage(tools: Partial<Record<'podman' | 'docker', { repoDigests: string[]; local?: boolean }>> = {}) {
  const root = path.join(work, `stage-${++folders}`);
  const dir = path.join(root, 'project');
  const answers = path.join(root, 'answers');
  fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(answers);
  for (const [tool, answer] of Object.entries(tools)) {
    fs.writeFileSync(path.join(answers, `${tool}-repo-digests`), JSON.stringify(answer.repoDigests));
    if (answer.local) fs.writeFileSync(path.join(answers, `${tool}-pulled`), '');
  }
  const record = path.join(root, 'calls');
  const env = {
    PATH: [
      recorded('recorded-kubectl'),
      recorded('recorded-ssh'),
      recorded('recorded-containers'),
      process.env.PATH,
    ].join(':'),
    KUBECTL_RECORD: path.join(root, 'kubectl-calls'),
    KUBECTL_ANSWERS: answers,
    SSH_ANSWERS: answers,
    CONTAINER_ANSWERS: answers,
    CONTAINER_RECORD: record,
  };
  const calls = () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8').trim().split('\n') : []);
  const stack = (name = 'testnet') =>
    yaml.load(fs.readFileSync(path.join(dir, `Pulumi.${name}.yaml`), 'utf8')) as { config: Record<string, unknown> };
  return { root, dir, answers, env, calls, stack, keys: path.join(root, 'keys') };
}

/** An SSH writer on `stack`, every question answered by flags (its host key given). */
const writerArgs = (s: ReturnType<typeof stage>, stack = 'testnet', host = '190.51.100.7') => [
  ...['--stack', stack, '--dir', s.dir, '--key-dir', s.keys, '--typenode', 'writer', '--target', 'ssh'],
  ...['--host', host, '--node-name', 'org-writer', '--node-email', 'ops@example.org', '--os', 'debian 12'],
  ...['--host-key', FAKE_HOST_KEY, '--keygen', 'yes', '--store-secret', 'no'],
];

const init = (s: ReturnType<typeof stage>, args: string[]) => runNpmAsync('init', args, { env: s.env });
const INSPECT = `image inspect --format {{json .RepoDigests}} ${IMAGE}`;

describe('npm run init --read-image-digest yes', () => {
  it('pulls the image with podman when it is not here, reads its digest and writes it', async () => {
    const s = stage({ podman: { repoDigests: [`docker.io/alethio/ethstats-cli@${DIGEST}`] } });
    const result = await init(s, [...writerArgs(s), '--read-image-digest', 'yes']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`podman pull ${IMAGE}\n`);
    expect(result.stdout).toContain(`imageDigest: ${DIGEST} (${IMAGE}, read with podman)\n`);
    expect(s.calls()).toEqual(['podman --version', `podman ${INSPECT}`, `podman pull ${IMAGE}`, `podman ${INSPECT}`]);
    expect(s.stack().config['lacchain:companions']).toEqual({ ethstats: { imageDigest: DIGEST } });
  });

  it("uses docker when podman is not installed, the image's own repository among its digests, without pulling", async () => {
    const s = stage({
      docker: { repoDigests: [`example.org/other@${OTHER_DIGEST}`, `alethio/ethstats-cli@${DIGEST}`], local: true },
    });
    const result = await init(s, [...writerArgs(s, 'mainnet', '190.0.2.7'), '--read-image-digest', 'yes']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(s.calls()).toEqual(['podman --version', 'docker --version', `docker ${INSPECT}`]);
    expect(s.stack('mainnet').config['lacchain:companions']).toEqual({ ethstats: { imageDigest: DIGEST } });
    // Mainnet's list no longer asks for it.
    expect(result.stdout).not.toContain('lacchain:companions.ethstats.imageDigest');
  });

  it('says why it could not read it, and mainnet keeps it on the still-to-do list', async () => {
    const s = stage({ podman: { repoDigests: [] } });
    fs.writeFileSync(path.join(s.answers, 'podman-pull-fails'), '');
    const result = await init(s, [...writerArgs(s, 'mainnet', '190.0.2.7'), '--read-image-digest', 'yes']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `imageDigest: not read (podman pull ${IMAGE} failed: Error: initializing source: requested access to the resource is denied)`,
    );
    expect(s.stack('mainnet').config['lacchain:companions']).toBeUndefined();
    expect(result.stdout).toContain(
      "pulumi config set --stack mainnet --path 'lacchain:companions.ethstats.imageDigest' sha256:<digest>",
    );
  });

  it('is refused when neither podman nor docker runs here, nothing written', async () => {
    const s = stage();
    const result = await init(s, [...writerArgs(s), '--read-image-digest', 'yes']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--read-image-digest: given yes, but neither podman nor docker runs here; allowed: no (the digest is then on the list), or a machine where one runs',
    );
    expect(fs.existsSync(path.join(s.dir, 'Pulumi.testnet.yaml'))).toBe(false);
  });

  it('is for SSH nodes only', async () => {
    const s = stage();
    const result = await init(s, [
      ...['--stack', 'testnet', '--dir', s.dir, '--typenode', 'writer', '--target', 'kubernetes'],
      ...['--read-image-digest', 'yes'],
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--read-image-digest is for ssh nodes, not kubernetes ones');
  });
});

describe('without the digest', () => {
  it('testnet: no tool runs unasked, nothing is left to do for it, and the plan passes with the advisory warning', async () => {
    const s = stage({ podman: { repoDigests: [`docker.io/alethio/ethstats-cli@${DIGEST}`] } });
    const result = await init(s, writerArgs(s));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(s.calls()).toEqual([]);
    expect(result.stdout).not.toContain('imageDigest');
    const out = path.join(s.root, 'plan');
    const planned = await runNpmAsync('plan', [
      ...['--stack', 'testnet', '--config', path.join(s.dir, 'Pulumi.testnet.yaml'), '--out', out],
      ...['--node-key-file', `writer=${path.join(s.keys, 'testnet-writer.key')}`],
    ]);
    expect(planned.stderr).not.toContain('policy violation');
    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain(
      `policy warning: [node-key-images-by-tag, advisory] remote step companions of node writer`,
    );
    expect(planned.stderr).toMatch(
      new RegExp(`container ethstats is pulled onto the node's machine from image ${IMAGE}, a tag that can be moved`),
    );
    const step = fs.readFileSync(path.join(out, 'remote', 'writer', '10-companions.env'), 'utf8');
    expect(step).toContain(`export ETHSTATS_IMAGE='${IMAGE}'\nexport ETHSTATS_IMAGE_BY_TAG='yes'\n`);
    // The relay signer's catalog release, pinned by the catalog: no digest asked of the operator either.
    expect(step).toContain(`export RELAY_SIGNER_GIT_BLOB='${RELAY_SIGNER.releaseBlobs['1.0.1']}'\n`);
    expect(step).not.toContain('RELAY_SIGNER_SHA256');
  });

  it('mainnet: the still-to-do list asks for it, naming npm run init as one way to read it', async () => {
    const s = stage();
    const result = await init(s, writerArgs(s, 'mainnet', '190.0.2.7'));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /lacchain:companions\.ethstats\.imageDigest: the registry digest \(sha256:…\) of docker\.io\/alethio\/ethstats-cli:latest that you have checked \(npm run init reads it with podman or docker;/,
    );
  });
});

describe('on a terminal', () => {
  it('offers to read it when podman runs here, and writes what it read', async () => {
    const s = stage({ podman: { repoDigests: [`docker.io/alethio/ethstats-cli@${DIGEST}`], local: true } });
    const plan = {
      cmd: ['npm', 'run', '--silent', 'init', '--', ...writerArgs(s), '--name', 'writer', '--key-custody', 'stack'],
      cwd: PROJECT_DIR,
      env: s.env,
      steps: [
        // The fields no flag answered, their defaults taken.
        ...['node_ip', 'user', 'port', 'node_release_version', 'dns_name'].map((field) => ({
          expect: `${field} — .*:`,
          send: '',
        })),
        {
          expect: `The monitoring client's image docker\\.io/alethio/ethstats-cli:latest has no digest pinned \\(open-protestnet runs the tag without it, flagged\\): read it with podman now .*\\[Y/n\\]`,
          send: '',
        },
      ],
      timeout: 60,
    };
    const transcript = await new Promise<{ code: number; text: string }>((resolve) => {
      const child = spawn('python3', [path.join(PROJECT_DIR, 'testing/pty_drive.py'), JSON.stringify(plan)]);
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      child.on('close', (code) => resolve({ code: code ?? -1, text }));
    });
    expect(transcript.code).toBe(0);
    expect(transcript.text).toContain(`imageDigest: ${DIGEST} (${IMAGE}, read with podman)`);
    expect(s.stack().config['lacchain:companions']).toEqual({ ethstats: { imageDigest: DIGEST } });
  });
});
