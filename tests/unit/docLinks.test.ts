/**
 * Every relative link and `#anchor` of the docs resolves: in README.md, docs/*.md, monitoring/README.md,
 * tests/README.md and ARCHITECTURE.md, each Markdown link's file exists and its anchor is a heading of that file (by
 * GitHub's rules: lower case, spaces to '-', punctuation removed, a repeated heading numbered); in the comments of the
 * stack files (Pulumi.*.yaml) and the values files (values/*.yml), each reference to a doc (`docs/kubernetes.md`,
 * `docs/kubernetes.md#pinning-images`, `(docs/kubernetes.md, "Pinning images")`) names a file and a heading it has.
 */
import * as fs from 'fs';
import * as path from 'path';
import { itAnswers } from '../../testing/answers';

const PROJECT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(PROJECT, file), 'utf8');
const filesIn = (dir: string, pattern: RegExp) =>
  fs
    .readdirSync(path.join(PROJECT, dir))
    .filter((name) => pattern.test(name))
    .map((name) => path.posix.join(dir, name));

const DOCS = [
  'README.md',
  'ARCHITECTURE.md',
  'tests/README.md',
  'monitoring/README.md',
  ...filesIn('docs', /\.md$/),
].filter((file) => fs.existsSync(path.join(PROJECT, file)));
const SETTINGS_FILES = [...filesIn('.', /^Pulumi\.[\w-]+\.yaml$/), ...filesIn('values', /\.ya?ml$/)];

/** Markdown text without its fenced code blocks and code spans, where a `[x](y)` is no link. */
function withoutCode(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/(`+)[\s\S]*?\1/g, '');
}

/** A heading's anchor as GitHub makes it. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings, a repeated one numbered (`x`, `x-1`, ...), and their titles. */
function headingsOf(file: string): { anchors: Set<string>; titles: Set<string> } {
  const anchors = new Set<string>();
  const titles = new Set<string>();
  const seen = new Map<string, number>();
  const text = read(file).replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = githubSlug(match[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    titles.add(match[1].replace(/`/g, '').trim());
  }
  return { anchors, titles };
}

/** What is wrong with a reference to `target` (a path from the project, `#anchor` optional), or undefined. */
function problemOf(target: string, from: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = file === '' ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
  if (!fs.existsSync(path.join(PROJECT, resolved))) return `${resolved} does not exist`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md')) return `${resolved} is not a Markdown file with headings`;
  const { anchors } = headingsOf(resolved);
  return anchors.has(decodeURIComponent(anchor)) ? undefined : `${resolved} has no heading #${anchor}`;
}

/** The relative links of a Markdown file: `[text](target)`, not to a web address. */
function linksOf(file: string): string[] {
  const links: string[] = [];
  for (const match of withoutCode(read(file)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1].replace(/^<|>$/g, '');
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    links.push(target);
  }
  return links;
}

/** A settings file's comments: each line's text after a `#` that starts a comment. */
function commentsOf(file: string): string {
  return read(file)
    .split('\n')
    .map((line) => /(?:^|\s)#(.*)$/.exec(line)?.[1] ?? '')
    .join('\n');
}

describe('the links of the docs resolve', () => {
  it.each(DOCS.map((file) => [file]))('%s', (file) => {
    const links = linksOf(file);
    const broken = links
      .map((target) => [target, problemOf(target, file)])
      .filter(([, problem]) => problem !== undefined);
    expect(broken).toEqual([]);
  });

  it('the docs the README links to are all there, and linked', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/kubernetes.md', 'monitoring/README.md']));
    expect(linksOf('README.md').length).toBeGreaterThan(5);
  });
});

describe("the settings files' comments name docs and headings that exist", () => {
  it.each(SETTINGS_FILES.map((file) => [file]))('%s', (file) => {
    const comments = commentsOf(file);
    const broken: [string, string][] = [];
    // `(docs/kubernetes.md, "Pinning images")`: a file and a heading's title.
    // (A comment may break the line inside it.)
    for (const match of comments.matchAll(/\(([\w./-]+|README),\s+"([^"]+)"\)/g)) {
      const doc = match[1] === 'README' ? 'README.md' : match[1];
      const title = match[2].replace(/\s+/g, ' ');
      const problem = problemOf(doc, 'README.md');
      if (problem) broken.push([match[0], problem]);
      else if (!headingsOf(doc).titles.has(title)) broken.push([match[0], `${doc} has no heading "${title}"`]);
    }
    // `docs/settings.md` or `docs/kubernetes.md#pinning-images`.
    for (const match of comments.matchAll(/(?<![\w/.-])((?:[\w-]+\/)*[\w.-]+\.md(?:#[\w-]+)?)/g)) {
      const problem = problemOf(match[1], 'README.md');
      if (problem) broken.push([match[1], problem]);
    }
    expect(broken).toEqual([]);
  });
});

describe('the check itself', () => {
  it('finds a missing file and a missing heading, and takes a heading that is there', () => {
    expect(problemOf('docs/kubernetes.md#pinning-images', 'README.md')).toBeUndefined();
    expect(problemOf('kubernetes.md#pinning-images', 'docs/operations.md')).toBeUndefined();
    expect(problemOf('docs/kubernetes.md#no-such-heading', 'README.md')).toBe(
      'docs/kubernetes.md has no heading #no-such-heading',
    );
    expect(problemOf('docs/nothing.md', 'README.md')).toBe('docs/nothing.md does not exist');
    expect(linksOf('docs/kubernetes.md')).toContain('#pinning-images');
  });
});

describe("GitHub's anchors", () => {
  itAnswers('%s → #%s', githubSlug, [
    ["The writer's gas-model routing", 'the-writers-gas-model-routing'],
    ["The network's companion services (`lacchain:companions`)", 'the-networks-companion-services-lacchaincompanions'],
    ['Backups, restore and rollback', 'backups-restore-and-rollback'],
    ['Day-2 in five lines', 'day-2-in-five-lines'],
    ['[Linked](x.md) and *stressed*', 'linked-and-stressed'],
    ['Stack config (`Pulumi.<stack>.yaml`, namespace `lacchain`)', 'stack-config-pulumistackyaml-namespace-lacchain'],
  ]);
});
