/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The CrossGuard policy pack as `pulumi preview --policy-pack policy` runs it: started the way the Pulumi CLI starts
 * a Node.js policy pack (@pulumi/pulumi's run-policy-pack, in the policy/ folder, TypeScript type-checked by ts-node)
 * and asked over the analyzer's gRPC protocol what the engine asks: the pack's policies, then each resource of the
 * example testnet stack as the engine sends it during a preview (unknown values included). The CLI itself cannot be
 * installed here; everything it talks to is the real thing.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as grpc from '@grpc/grpc-js';
import { Empty } from 'google-protobuf/google/protobuf/empty_pb';
import { Struct } from 'google-protobuf/google/protobuf/struct_pb';
import { AnalyzerClient } from '@pulumi/pulumi/proto/analyzer_grpc_pb';
import {
  AnalyzeDiagnostic,
  AnalyzeRequest,
  AnalyzerInfo,
  AnalyzerResourceOptions,
  EnforcementLevel,
} from '@pulumi/pulumi/proto/analyzer_pb';
import { unknownCheckingProxy } from '@pulumi/policy';
import { resourceOf, resourcePolicies } from '../../policy/crossguard';
import { UNKNOWN_MARKER } from '../../policy/inspect';
import { POLICY_PACK_NAME } from '../../policy/offline';
import { RULES } from '../../policy/rules';
import { pinnedExample } from '../../testing/examples';
import { PROJECT_DIR, runNpm } from '../../testing/run';

/** The engine's marker for an unknown string in a preview (what the proxy of @pulumi/policy recognises). */
const UNKNOWN_STRING = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';
const PROJECT = 'lacchain-besu-node';
const urn = (type: string, name: string, stack = 'testnet') => `urn:pulumi:${stack}::${PROJECT}::${type}::${name}`;

/** The engine's view of recorded inputs: the plan's "known after pulumi up" becomes the engine's unknown. */
function engineInputs(value: unknown): unknown {
  if (value === UNKNOWN_MARKER) return UNKNOWN_STRING;
  if (Array.isArray(value)) return value.map(engineInputs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, engineInputs(v)]));
  }
  return value;
}

describe('the policies of the pack', () => {
  const policies = resourcePolicies(RULES, () => ({ settingsProblem: 'not read in this test' }));

  it('are the rules, each mandatory but the advisory ones', () => {
    expect(policies.map((p) => [p.name, p.enforcementLevel])).toEqual(
      RULES.map((r) => [r.name, r.advisory ? 'advisory' : 'mandatory']),
    );
  });

  it('check what the engine passes: a value unknown in preview is skipped, the rest still checked', () => {
    const reported: string[] = [];
    const props = unknownCheckingProxy({
      metadata: { name: 'besu-node-writer-key', labels: { 'app.kubernetes.io/instance': 'writer' } },
      stringData: { key: UNKNOWN_STRING },
    });
    const args: any = {
      type: 'kubernetes:core/v1:Secret',
      name: 'writer-key',
      urn: urn('kubernetes:core/v1:Secret', 'writer-key'),
      props,
      opts: { protect: true, parent: urn('lacchain:index:KubernetesNode', 'writer') },
    };
    expect(resourceOf(args)).toMatchObject({
      inputs: { stringData: { key: UNKNOWN_MARKER } },
      options: { protect: true, parent: 'writer' },
    });
    for (const policy of policies) policy.validateResource(args, (message: string) => reported.push(message));
    expect(reported).toEqual([
      expect.stringMatching(/^Secret writer-key \(the node key\) is protected: pulumi destroy/),
    ]);
  });
});

describe('the pack served as the Pulumi CLI serves it', () => {
  let pack: ChildProcess;
  let client: AnalyzerClient;
  let resources: any[];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-pack-'));

  beforeAll(async () => {
    // The example with its images pinned as its comments ask (the tests' digests), so that every resource passes.
    const config = pinnedExample('testnet', fs.mkdtempSync(path.join(work, 'example-')));
    // The pack reads its expected values from the example's stack files, as from an operator's project folder.
    const planned = runNpm('plan', ['--stack', 'testnet', '--config', config, '--out', work]);
    expect(planned.code).toBe(0);
    resources = JSON.parse(fs.readFileSync(path.join(work, 'resources.json'), 'utf8'));
    const runner = require.resolve('@pulumi/pulumi/cmd/run-policy-pack', { paths: [PROJECT_DIR] });
    pack = spawn(process.execPath, [runner, '127.0.0.1:0', '.'], {
      cwd: path.join(PROJECT_DIR, 'policy'),
      env: { ...process.env, LACCHAIN_POLICY_STACK_DIR: path.dirname(config) },
    });
    let stderr = '';
    pack.stderr?.on('data', (d) => (stderr += d));
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      pack.stdout?.on('data', (d) => {
        stdout += d;
        const match = /^(\d+)\s*$/m.exec(stdout);
        if (match) resolve(Number(match[1]));
      });
      pack.on('exit', (code) => reject(new Error(`the policy pack exited (${code}) before serving:\n${stderr}`)));
    });
    client = new AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  }, 120_000);

  afterAll(() => {
    client?.close();
    if (pack?.pid && pack.exitCode === null) pack.kill();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const info = () =>
    new Promise<AnalyzerInfo>((resolve, reject) =>
      client.getAnalyzerInfo(new Empty(), (error, response) => (error ? reject(error) : resolve(response))),
    );

  /** Asks the pack about one resource as the engine does in a preview. */
  function analyze(resource: any, stack = 'testnet'): Promise<AnalyzeDiagnostic[]> {
    const request = new AnalyzeRequest();
    request.setType(resource.type);
    request.setName(resource.name);
    request.setUrn(urn(resource.type, resource.name, stack));
    request.setProperties(Struct.fromJavaScript(engineInputs(resource.inputs) as any));
    const options = new AnalyzerResourceOptions();
    options.setProtect(resource.options.protect);
    if (resource.options.parent)
      options.setParent(urn('lacchain:index:KubernetesNode', resource.options.parent, stack));
    request.setOptions(options);
    return new Promise((resolve, reject) =>
      client.analyze(request, (error, response) => (error ? reject(error) : resolve(response.getDiagnosticsList()))),
    );
  }

  it('names the pack and its policies, mandatory but the advisory ones', async () => {
    const answer = await info();
    expect(answer.getName()).toBe(POLICY_PACK_NAME);
    expect(answer.getVersion()).toBe(
      JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'policy', 'package.json'), 'utf8')).version,
    );
    expect(answer.getPoliciesList().map((p) => [p.getName(), p.getEnforcementlevel()])).toEqual(
      RULES.map((r) => [r.name, r.advisory ? EnforcementLevel.ADVISORY : EnforcementLevel.MANDATORY]),
    );
  });

  it('passes every resource of the example testnet stack, reading the expected values from its settings', async () => {
    expect(resources.length).toBeGreaterThan(5);
    for (const resource of resources) {
      expect([resource.name, (await analyze(resource)).map((d) => d.getMessage())]).toEqual([resource.name, []]);
    }
  });

  it('reports a violation as mandatory, naming the policy', async () => {
    const service = structuredClone(resources.find((r) => r.type === 'kubernetes:core/v1:Service'));
    service.inputs.spec.loadBalancerIP = '190.51.100.99';
    const secret = structuredClone(resources.find((r) => r.type === 'kubernetes:core/v1:Secret'));
    secret.options.protect = true;
    const diagnostics = [...(await analyze(service)), ...(await analyze(secret))];
    expect(diagnostics.map((d) => [d.getPolicyname(), d.getEnforcementlevel(), d.getPolicypackname()])).toEqual([
      ['service-static-public-ip', EnforcementLevel.MANDATORY, POLICY_PACK_NAME],
      ['node-key-secret-kept', EnforcementLevel.MANDATORY, POLICY_PACK_NAME],
    ]);
    expect(diagnostics[0].getMessage()).toContain('spec.loadBalancerIP is "190.51.100.99", but deploy.publicIP is');
  });

  it('reports a container getting the node key from an image tag as advisory on testnet', async () => {
    const set = structuredClone(resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet'));
    const besu = set.inputs.spec.template.spec.containers.find((c: any) => c.name === 'writer-besu');
    besu.image = 'hyperledger/besu:23.4.1';
    const diagnostics = await analyze(set);
    expect(diagnostics.map((d) => [d.getPolicyname(), d.getEnforcementlevel()])).toEqual([
      ['node-key-images-by-tag', EnforcementLevel.ADVISORY],
    ]);
    expect(diagnostics[0].getMessage()).toContain(
      'container writer-besu receives the node key from image hyperledger/besu:23.4.1',
    );
  });

  it('fails closed for a stack whose settings it cannot read', async () => {
    const set = resources.find((r) => r.type === 'kubernetes:apps/v1:StatefulSet');
    const diagnostics = await analyze(set, 'dev');
    expect(diagnostics.map((d) => d.getPolicyname())).toEqual(['pod-pinned-to-worker', 'key-secret-referenced']);
    for (const diagnostic of diagnostics) {
      expect(diagnostic.getMessage()).toMatch(
        /cannot be checked against the settings of node .*: the settings of stack dev cannot be read/,
      );
    }
  });
});
