/**
 * Part "plan": wall time and peak memory of the offline plan (cli/plan.ts, the program evaluated without the
 * Pulumi engine) for stacks of 1, 10, 50 and 100 nodes, median of several runs, against its fixed cost.
 *
 * Each run is the node process that does the work (`node ts-node --transpile-only cli/plan.ts ...`, what
 * `npm run plan` runs, without the npm wrapper), measured from spawn to exit; peak memory is its maximum resident set.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { fixed, median, PartResult, progress, PROJECT_DIR, runTimed, sectionTop, table, verdict } from './common';
import { valuesAt } from '../testing/values';

/** Stack sizes measured. */
export const PLAN_SIZES = [1, 10, 50, 100];
/** Targets of the issue. */
const RATIO_TARGET = 10;
const MEMORY_TARGET_MB = 500;

const TS_NODE = path.join(PROJECT_DIR, 'node_modules', 'ts-node', 'dist', 'bin.js');
const TYPES = ['writer', 'validator', 'bootnode'] as const;

type Kind = 'kubernetes' | 'ssh';

/** Writes a testnet stack of `count` nodes of one kind (node types in turn) and its values files; returns the config. */
function writeStack(dir: string, kind: Kind, count: number): string {
  fs.mkdirSync(path.join(dir, 'values'), { recursive: true });
  const nodes = [];
  for (let i = 1; i <= count; i++) {
    const name = `node-${String(i).padStart(3, '0')}`;
    const typenode = TYPES[(i - 1) % TYPES.length];
    if (kind === 'kubernetes') {
      // Documentation addresses: 203.0.113.1-100 (TEST-NET-3), one per node.
      const ip = `203.0.113.${i}`;
      const values = valuesAt('testnet', typenode, ip, { workerName: `worker-${i}`, nodeName: `bench-${name}` });
      fs.writeFileSync(path.join(dir, 'values', `${name}.yml`), yaml.dump(values));
      nodes.push({ name, typenode, target: 'kubernetes', values: `values/${name}.yml` });
    } else {
      // Documentation addresses: 198.51.100.1-100 (TEST-NET-2), one machine per node.
      const ip = `198.51.100.${i}`;
      nodes.push({
        name,
        typenode,
        target: 'ssh',
        inventory: {
          host: ip,
          node_ip: ip,
          node_name: `bench-${name}`,
          node_email: 'ops@example.org',
          user: 'ubuntu',
        },
      });
    }
  }
  const config: Record<string, unknown> = { 'lacchain:network': 'open-protestnet', 'lacchain:nodes': nodes };
  // An encrypted value, as `pulumi config set --secret` leaves it: the plan accepts it without decrypting it.
  if (kind === 'ssh') config['lacchain:sshPrivateKey'] = { secure: 'v1:x' };
  const file = path.join(dir, 'Pulumi.testnet.yaml');
  fs.writeFileSync(file, yaml.dump({ config }));
  return file;
}

interface Sample {
  seconds: number;
  peakMiB: number;
  cpuSeconds: number;
}

interface Measured {
  label: string;
  nodes: number;
  kind: Kind | 'floor';
  args: string[];
  samples: Sample[];
  resources?: number;
  /** Checks the warm-up run's output. */
  check?: (stdout: string) => void;
}

async function once(m: Measured): Promise<{ sample: Sample; stdout: string }> {
  const result = await runTimed('node', m.args, { measureMemory: true, timeoutMs: 10 * 60_000 });
  if (result.code !== 0) throw new Error(`${m.label}: exited ${result.code}:\n${result.stderr.slice(-3000)}`);
  return {
    sample: { seconds: result.seconds, peakMiB: result.peakMiB ?? NaN, cpuSeconds: result.cpuSeconds ?? NaN },
    stdout: result.stdout,
  };
}

/**
 * Runs the plan benchmark: after one warm-up run of each stack (not counted: file cache, first loads), `runs`
 * rounds, each running every stack once in turn, so that other work on the machine weighs on every size alike.
 */
export async function benchPlan(runs = 5): Promise<PartResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lacchain-bench-plan-'));
  try {
    const measured: Measured[] = [
      { label: 'node -e 0', nodes: 0, kind: 'floor', args: ['-e', '0'], samples: [] },
      {
        label: 'fixed cost: ts-node + modules of the plan, no node',
        nodes: 0,
        kind: 'floor',
        args: [TS_NODE, '--transpile-only', path.join(__dirname, 'planFloor.ts')],
        samples: [],
      },
    ];
    for (const kind of ['kubernetes', 'ssh'] as Kind[]) {
      for (const count of PLAN_SIZES) {
        const dir = path.join(work, `${kind}-${count}`);
        const config = writeStack(dir, kind, count);
        const label = `${count} ${kind} node${count === 1 ? '' : 's'}`;
        const args = [TS_NODE, '--transpile-only', 'cli/plan.ts', '--stack', 'testnet', '--config', config];
        measured.push({
          label,
          nodes: count,
          kind,
          args: [...args, '--out', path.join(dir, 'out')],
          samples: [],
          check: (stdout) => {
            const planned = Object.keys((JSON.parse(stdout) as { nodes: Record<string, unknown> }).nodes).length;
            if (planned !== count) throw new Error(`${label}: the plan shows ${planned} nodes`);
          },
        });
      }
    }
    for (const m of measured) {
      progress(`plan: warm-up: ${m.label}`);
      const { stdout } = await once(m);
      m.check?.(stdout);
      if (m.kind !== 'floor') {
        const out = m.args[m.args.length - 1];
        m.resources = (JSON.parse(fs.readFileSync(path.join(out, 'resources.json'), 'utf8')) as unknown[]).length;
      }
    }
    for (let round = 1; round <= runs; round++) {
      for (const m of measured) {
        const { sample } = await once(m);
        m.samples.push(sample);
        progress(
          `plan: round ${round}/${runs}: ${m.label}: ${sample.seconds.toFixed(2)} s, ` +
            `CPU ${fixed(sample.cpuSeconds)} s, ${fixed(sample.peakMiB, 0)} MiB`,
        );
      }
    }
    return { name: 'plan', markdown: await report(measured, runs) };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function report(measured: Measured[], runs: number): Promise<string> {
  const med = (m: Measured) => median(m.samples.map((s) => s.seconds));
  const cpu = (m: Measured) => median(m.samples.map((s) => s.cpuSeconds));
  const mem = (m: Measured) => median(m.samples.map((s) => s.peakMiB));
  const peak = (m: Measured) => Math.max(...m.samples.map((s) => s.peakMiB));
  const floor = measured[1];
  const floorSeconds = med(floor);
  const floorCpu = cpu(floor);
  const one = (kind: Kind) => measured.find((m) => m.kind === kind && m.nodes === 1)!;
  const rows = measured.map((m) => {
    const seconds = med(m);
    const isPlan = m.kind !== 'floor';
    const base = isPlan ? one(m.kind as Kind) : undefined;
    return [
      m.label,
      m.resources ?? '',
      `**${fixed(seconds)}**`,
      `${fixed(Math.min(...m.samples.map((s) => s.seconds)))}–${fixed(Math.max(...m.samples.map((s) => s.seconds)))}`,
      fixed(cpu(m)),
      base ? `${fixed(seconds / med(base))}x` : '',
      base ? `${fixed(cpu(m) / cpu(base))}x` : '',
      base ? `+${fixed(seconds - floorSeconds)} s (${fixed(seconds / floorSeconds)}x)` : '',
      base && m.nodes > 1 ? `${fixed(((cpu(m) - cpu(base)) / (m.nodes - 1)) * 1000, 0)} ms` : '',
      fixed(mem(m), 0),
      fixed(peak(m), 0),
    ];
  });
  const mbOf = (mib: number) => mib * 1.048576;
  const lines: string[] = await sectionTop(
    'Program evaluation: the offline plan',
    `Each figure is the median of ${runs} runs of the node process that does the work (\`node ts-node ` +
      '--transpile-only cli/plan.ts --stack testnet --config … --out …`, what `npm run plan` runs, without the npm ' +
      'wrapper), from spawn to exit, files written; one warm-up run of each stack is not counted, and the runs go ' +
      'round by round through every stack so that other work on the machine weighs on every size alike. CPU time is ' +
      "user + system; peak memory is the process's maximum resident set (both from GNU time). Stacks: N nodes of " +
      'one kind, node types in turn (writer, validator, bootnode), each with its own addresses (documentation ' +
      'ranges) and, on Kubernetes, its own values file and worker; SSH stacks have an encrypted ' +
      '`lacchain:sshPrivateKey`.',
  );
  lines.push('');
  lines.push(
    table(
      [
        'Stack',
        'Resources',
        'Wall time (s)',
        'Range (s)',
        'CPU time (s)',
        'Wall vs 1 node',
        'CPU vs 1 node',
        'Wall above the fixed cost',
        'CPU per added node',
        'Peak memory (MiB, median)',
        'Peak memory (MiB, max)',
      ],
      rows,
    ),
  );
  lines.push('');
  lines.push('Targets:');
  lines.push('');
  for (const kind of ['kubernetes', 'ssh'] as Kind[]) {
    const hundred = measured.find((m) => m.kind === kind && m.nodes === 100)!;
    const ratio = med(hundred) / med(one(kind));
    const cpuRatio = cpu(hundred) / cpu(one(kind));
    const workRatio = (cpu(hundred) - floorCpu) / (cpu(one(kind)) - floorCpu);
    // Without GNU time there is no CPU time: the wall time alone decides.
    const worst = Number.isFinite(cpuRatio) ? Math.max(ratio, cpuRatio) : ratio;
    const maxMB = mbOf(Math.max(...measured.filter((m) => m.kind === kind).map(peak)));
    lines.push(
      `- ${kind}: 100 nodes cost ${fixed(ratio)}x one node in wall time and ${fixed(cpuRatio)}x in CPU time ` +
        `(target under ${RATIO_TARGET}x: ${verdict(worst < RATIO_TARGET)}); without the fixed ` +
        `cost, the work itself grows ${fixed(workRatio, 1)}x (CPU) for 100x the nodes. Peak memory at most ` +
        `${fixed(maxMB, 0)} MB (target under ${MEMORY_TARGET_MB} MB: ${verdict(maxMB < MEMORY_TARGET_MB)}).`,
    );
  }
  lines.push('');
  lines.push(
    `Lower bound: the fixed cost, ${fixed(floorSeconds)} s wall, ${fixed(floorCpu)} s CPU and ${fixed(mem(floor), 0)} ` +
      'MiB (Node.js, ts-node and loading every module of the plan — the program, its components, `@pulumi/pulumi`, ' +
      '`@pulumi/kubernetes`, `@pulumi/command`, `@pulumi/random` — then exiting: `bench/planFloor.ts`), of which ' +
      `Node.js alone (\`node -e 0\`) is ${fixed(med(measured[0]))} s. Every plan pays it whatever its size. ` +
      '"Wall above the fixed cost" is each figure\'s distance from it; "CPU per added node" is the marginal cost of ' +
      'one more node (CPU time, which other work on the machine disturbs less than wall time).',
  );
  return lines.join('\n');
}
