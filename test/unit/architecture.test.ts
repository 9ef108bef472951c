// The import graph of src/ and constructs/: no cycles (type-only imports included), and the layers
// depend in one direction. Read from the sources with TypeScript's own pre-processor, so the rule
// runs with the unit tests and needs no extra tool.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const root = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** Relative imports of each file, resolved to repository paths (`src/api/common.ts`). */
function importGraph(): Map<string, string[]> {
  const files = [...sourceFiles('src'), ...sourceFiles('constructs')];
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(root, file), 'utf8'), true, true);
    const deps = info.importedFiles
      .map((f) => f.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => path.join(path.dirname(file), spec))
      .map((p) => [`${p}.ts`, path.join(p, 'index.ts')].find((c) => known.has(c)))
      .filter((p): p is string => !!p);
    graph.set(file, [...new Set(deps)]);
  }
  return graph;
}

/** Strongly connected components with more than one file (Tarjan), plus files importing themselves. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** Every import from a file under `from` into a file under `to`, as `a -> b`. */
function edges(graph: Map<string, string[]>, from: string, to: string): string[] {
  return [...graph].flatMap(([file, deps]) => (file.startsWith(from) ? deps.filter((d) => d.startsWith(to)).map((d) => `${file} -> ${d}`) : []));
}

describe('import graph', () => {
  const graph = importGraph();

  test('covers the sources', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/generate.ts')).toEqual(expect.arrayContaining(['src/chart/files.ts', 'src/api/generated.ts']));
  });

  test('has no cycles', () => {
    expect(cycles(graph)).toEqual([]);
  });

  test('the cycle finder finds one', () => {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']]);
    expect(cycles(new Map([['a', ['a']]]))).toEqual([['a']]);
  });

  test.each([
    // The API layer is the base: kinds, schemas, defaults.
    ['src/api/', 'src/chart/'],
    ['src/api/', 'constructs/'],
    ['src/api/', 'src/operator/'],
    ['src/api/', 'src/cli/'],
    // Pure translation never reaches the runtime, the chart or the CLI.
    ['src/translate/', 'src/operator/'],
    ['src/translate/', 'src/chart/'],
    ['src/translate/', 'src/cli/'],
    // The CLI talks to the cluster through shared layers, never through the operator's code.
    ['src/cli/', 'src/operator/'],
    ['src/webhook/', 'src/operator/'],
    ['src/kube/', 'src/operator/'],
  ])('%s does not import %s', (from, to) => {
    expect(edges(graph, from, to)).toEqual([]);
  });

  // imports/ holds cdk8s classes generated from upstream CRDs; src/ (the operator's runtime among
  // it) uses them to check its types and must not load them, or cdk8s, at runtime.
  test('src/ imports the generated imports/ classes as types only', () => {
    const valueImports = sourceFiles('src').filter((f) => /^import (?!type )[^;]*from '(\.\.\/)+imports\//m.test(fs.readFileSync(path.join(root, f), 'utf8')));
    expect(valueImports).toEqual([]);
    expect(sourceFiles('src').some((f) => /^import type [^;]*from '(\.\.\/)+imports\//m.test(fs.readFileSync(path.join(root, f), 'utf8')))).toBe(true);
  });
});
