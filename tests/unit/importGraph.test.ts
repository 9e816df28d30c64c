/**
 * The project's own TypeScript imports one way: no file reaches itself through its imports (no import circle), and no
 * folder imports from a layer above it (ARCHITECTURE.md: the core at the bottom, the command-line tools and the test
 * harness on top). Every import counts, as the TypeScript compiler reads them: `import`, `import type`,
 * `export … from`, `import(…)` and `require(…)` of a relative path.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const PROJECT = path.resolve(__dirname, '../..');

/** The layers, bottom first: a file may import from its own layer and those below it, never from one above. */
const LAYERS = 'core policy components program.ts library tools index.ts cli testing bench'.split(' ');

/** The layer of a project file (its top folder, or the file itself at the top). */
const layerOf = (file: string) => file.split('/')[0];

/** Every .ts file of the layers, as paths relative to the project ('/'-separated). */
function projectFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(PROJECT, dir), { withFileTypes: true })) {
      const file = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.ts')) files.push(file);
    }
  };
  for (const layer of LAYERS) {
    if (layer.endsWith('.ts')) files.push(layer);
    else walk(layer);
  }
  return files;
}

/** Each file's imports of other project files, resolved as Node resolves a relative path (file.ts, dir/index.ts). */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const imported = ts.preProcessFile(fs.readFileSync(path.join(PROJECT, file), 'utf8'), true, true).importedFiles;
    const targets = imported
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.posix.normalize(path.posix.join(path.posix.dirname(file), name)))
      .map((target) => [target, `${target}.ts`, `${target}/index.ts`].find((candidate) => known.has(candidate)))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles: the strongly connected groups of more than one file, or a file importing itself (Tarjan). */
function importCircles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

describe("the project's imports", () => {
  const graph = importGraph(projectFiles());

  it('are read: the program, the tools and the core are tied by them', () => {
    // A reader that found no import would find no circle either.
    expect(graph.get('index.ts')).toContain('library/index.ts');
    expect(graph.get('library/stackFile.ts')).toContain('program.ts');
    expect(graph.get('cli/plan/run.ts')).toContain('program.ts');
    expect([...graph.values()].flat().length).toBeGreaterThan(500);
  });

  it('form no circle', () => {
    expect(importCircles(graph).map((circle) => circle.join(' ↔ '))).toEqual([]);
  });

  it('point down the layers, never up', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => LAYERS.indexOf(layerOf(target)) > LAYERS.indexOf(layerOf(file)))
        .map((target) => `${file} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("are all watched by the launcher: a change to any file the build compiles makes bin/ stale (launcher's SOURCES)", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { SOURCES } = require('../../launcher') as { SOURCES: string[] };
    const build = ts.parseConfigFileTextToJson(
      'tsconfig.build.json',
      fs.readFileSync(path.join(PROJECT, 'tsconfig.build.json'), 'utf8'),
    );
    const compiled = new Set<string>();
    const visit = (file: string) => {
      if (compiled.has(file)) return;
      compiled.add(file);
      for (const next of graph.get(file) ?? []) visit(next);
    };
    for (const file of (build.config as { files: string[] }).files) visit(file);
    const watched = (file: string) => SOURCES.some((source) => file === source || file.startsWith(`${source}/`));
    expect([...compiled].filter((file) => !watched(file))).toEqual([]);
    expect(compiled.size).toBeGreaterThan(100);
  });

  it('circle finder: sees a circle of three and a file importing itself, and none in a line', () => {
    const circle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(importCircles(circle)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
    expect(
      importCircles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', []],
        ]),
      ),
    ).toEqual([]);
  });
});
