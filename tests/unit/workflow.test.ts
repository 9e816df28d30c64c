/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The pull-request workflow (.github/workflows/pull-request.yml), parsed: it installs, type-checks, lints and tests,
 * plans both stacks offline against the pull request's base, and previews both stacks with the policy pack, posting
 * a comment, only when the repository holds backend credentials. Every step is explained by a comment.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { STACK_NAMES } from '../../core/catalog/networks';
import { PROJECT_DIR } from '../../testing/run';

const FILE = path.join(PROJECT_DIR, '.github', 'workflows', 'pull-request.yml');
const text = fs.readFileSync(FILE, 'utf8');
const workflow = yaml.load(text) as any;
const jobs = workflow.jobs as Record<string, any>;

/** The steps of a job whose `run` matches, or whose `uses` starts with the given action. */
const running = (job: string, pattern: RegExp) => jobs[job].steps.filter((s: any) => pattern.test(s.run ?? ''));
const using = (job: string, action: string) =>
  jobs[job].steps.filter((s: any) => (s.uses ?? '').startsWith(`${action}@`));

describe('the pull-request workflow', () => {
  it('runs on pull requests, reading the code and writing only pull-request comments', () => {
    expect(Object.keys(workflow.on)).toEqual(['pull_request']);
    expect(workflow.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
    expect(Object.keys(jobs).sort()).toEqual(['checks', 'credentials', 'plan', 'preview']);
  });

  it('installs on Node.js 20, type-checks, lints and runs the tests', () => {
    const steps = jobs.checks.steps.map((s: any) => s.uses ?? s.run);
    const order = [
      /^actions\/checkout@/,
      /^actions\/setup-node@/,
      /^npm install\b/,
      /^npm run build$/,
      /^npm run lint$/,
    ];
    let last = -1;
    for (const pattern of order) {
      const at = steps.findIndex((s: string) => pattern.test(s));
      expect([pattern.source, at > last]).toEqual([pattern.source, true]);
      last = at;
    }
    expect(using('checks', 'actions/setup-node')[0].with['node-version']).toBe(20);
    const test = running('checks', /\bnpm test$/);
    expect(test).toHaveLength(1);
    expect(steps.indexOf(test[0].run)).toBeGreaterThan(last);
    // The SSH end-to-end tests must run in CI: root and the test host's Debian packages.
    expect(test[0].run).toMatch(/^sudo .*CI=true npm test$/);
    expect(running('checks', /apt-get install .*debootstrap systemd-container/s)).toHaveLength(1);
  });

  it('plans both stacks offline against the base of the pull request, and keeps the plans', () => {
    expect([...jobs.plan.strategy.matrix.stack].sort()).toEqual([...STACK_NAMES].sort());
    expect(jobs.plan.needs).toBeUndefined();
    expect(jobs.plan.if).toBeUndefined();
    expect(using('plan', 'actions/checkout')[0].with['fetch-depth']).toBe(0);
    expect(running('plan', /^npm install\b/)).toHaveLength(1);
    const [step] = running('plan', /npm run --silent plan -- /);
    expect(step.run).toMatch(/--stack "\$STACK" --out "plan\/\$STACK" --diff-ref "\$BASE"/);
    expect(step.env).toEqual({
      STACK: '${{ matrix.stack }}',
      BASE: '${{ github.event.pull_request.base.sha }}',
    });
    // A violation (exit 1) fails the job, after the diff and the violations reach the job summary.
    expect(step.run).toMatch(/GITHUB_STEP_SUMMARY[\s\S]*exit "\$status"\s*$/);
    const [upload] = using('plan', 'actions/upload-artifact');
    expect(upload).toMatchObject({ if: 'always()', with: { path: 'plan/${{ matrix.stack }}' } });
  });

  it('previews both stacks with the policy pack and comments on the pull request', () => {
    expect([...jobs.preview.strategy.matrix.stack].sort()).toEqual([...STACK_NAMES].sort());
    expect(jobs.preview.needs).toEqual(['checks', 'credentials']);
    expect(running('preview', /^npm install\b/)).toHaveLength(1);
    const [preview] = using('preview', 'pulumi/actions');
    expect(preview.uses).toMatch(/^pulumi\/actions@v\d+$/);
    expect(preview.with).toMatchObject({
      command: 'preview',
      'stack-name': '${{ matrix.stack }}',
      policyPacks: 'policy',
      'comment-on-pr': true,
      'github-token': '${{ secrets.GITHUB_TOKEN }}',
    });
    expect(preview.env.PULUMI_ACCESS_TOKEN).toBe('${{ secrets.PULUMI_ACCESS_TOKEN }}');
    expect(fs.existsSync(path.join(PROJECT_DIR, preview.with.policyPacks, 'PulumiPolicy.yaml'))).toBe(true);
  });

  it("previews only when set up, in the protected environment that needs a maintainer's approval", () => {
    expect(jobs.preview.if).toBe("needs.credentials.outputs.available == 'true'");
    expect(jobs.preview.environment).toBe('pulumi-preview');
    const [check] = jobs.credentials.steps;
    expect(jobs.credentials.outputs.available).toBe(`\${{ steps.${check.id}.outputs.available }}`);
    expect(jobs.credentials.environment).toBeUndefined();
    expect(check.env).toEqual({ PULUMI_PREVIEW: '${{ vars.PULUMI_PREVIEW }}' });
    expect(check.run).toContain('echo "available=true" >> "$GITHUB_OUTPUT"');
    expect(check.run).toContain('echo "available=false" >> "$GITHUB_OUTPUT"');
    // No job outside the environment sees a secret of the stacks.
    for (const [name, job] of Object.entries(jobs) as [string, any][]) {
      if (name === 'preview') continue;
      expect([name, JSON.stringify(job)]).not.toEqual([name, expect.stringMatching(/secrets\.(PULUMI|KUBECONFIG)/)]);
    }
  });

  it('explains every job and step', () => {
    // The file opens with the review flow, one line per job of it.
    const header = text.slice(0, text.indexOf('\nname:'));
    for (const job of ['checks', 'plan', 'preview']) expect(header).toMatch(new RegExp(`^#\\s+${job}\\s+\\S`, 'm'));
    // Every step says what it does.
    for (const job of Object.values(jobs)) {
      for (const step of job.steps) expect(typeof step.name).toBe('string');
    }
    expect(text.match(/^\s*# /gm)!.length).toBeGreaterThanOrEqual(15);
  });
});
