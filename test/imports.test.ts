/**
 * The import graph of the sources (lib/, backends/, the shipped suite test/conformance/): no
 * cycle, and no layer imports one above it. Static `import`/`export … from`, side-effect imports
 * and dynamic `import('…')` with a literal path count, type-only imports too (a cycle of types
 * is still two modules that cannot be read apart).
 *
 * The layers, lowest first; a file may import its own layer and those listed for it:
 *
 * | layer | files | may import |
 * |---|---|---|
 * | core | lib/*.ts but the composition files, lib/errors/, lib/log-base/, lib/leveldb/, lib/types/ | core |
 * | projections | lib/projections/ | core |
 * | honcho | lib/honcho/ | core, projections |
 * | backends | backends/ | core |
 * | composition | lib/target.ts, lib/ledger.ts, lib/index.ts, lib/copy.ts, lib/drop.ts, lib/verify.ts: they pick a backend | all but cli, conformance |
 * | cli | lib/cli.ts, lib/cli/ | all but conformance |
 * | conformance | test/conformance/ (its *.test.ts files excluded: they are not shipped) | all but cli |
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from './support/packed.js';

type Layer = 'core' | 'projections' | 'honcho' | 'backends' | 'composition' | 'cli' | 'conformance';

const COMPOSITION = new Set([
  'lib/target.ts',
  'lib/ledger.ts',
  'lib/index.ts',
  'lib/copy.ts',
  'lib/drop.ts',
  'lib/verify.ts',
]);

const MAY_IMPORT: { readonly [layer in Layer]: readonly Layer[] } = {
  core: ['core'],
  projections: ['core', 'projections'],
  honcho: ['core', 'projections', 'honcho'],
  backends: ['core', 'backends'],
  composition: ['core', 'projections', 'honcho', 'backends', 'composition'],
  cli: ['core', 'projections', 'honcho', 'backends', 'composition', 'cli'],
  conformance: ['core', 'projections', 'honcho', 'backends', 'composition', 'conformance'],
};

/** Cycles and upward imports allowed for now, each with its reason: none. */
const KNOWN: readonly string[] = [];

function layerOf(file: string): Layer {
  if (file === 'lib/cli.ts' || file.startsWith('lib/cli/')) return 'cli';
  if (COMPOSITION.has(file)) return 'composition';
  if (file.startsWith('test/conformance/')) return 'conformance';
  if (file.startsWith('backends/')) return 'backends';
  if (file.startsWith('lib/honcho/')) return 'honcho';
  if (file.startsWith('lib/projections/')) return 'projections';
  return 'core';
}

const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s[^;]*?\sfrom\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|(?:^|[\n;])\s*import\s*'([^']+)'/g;

/** Each source file (relative to the root) and the source files it imports. */
export function importGraph(root: string): Map<string, string[]> {
  const files: string[] = [];
  for (const dir of ['lib', 'backends', 'test/conformance'])
    for (const entry of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }))
      if (entry.endsWith('.ts') && !entry.endsWith('.d.ts') && !entry.endsWith('.test.ts'))
        files.push(join(dir, entry));
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3] ?? '';
      if (!spec.startsWith('.')) continue;
      const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
      if (known.has(target)) targets.add(target);
      else if (!/\.(json|sql|cjs|mjs)$/.test(spec)) targets.add(`${target} (missing)`);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The cycles of `graph`: its strongly connected components of more than one file, or a file importing itself. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

test('the cycle finder finds a cycle, and none where there is none', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
    ['e', ['e']],
  ]);
  assert.equal(cyclesOf(graph), [['a', 'b', 'c'], ['e']]);
  assert.equal(
    cyclesOf(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
});

test('the graph is read: imports, exports, dynamic imports', () => {
  const graph = importGraph(ROOT);
  assert.ok(graph.size > 100, `${graph.size} files`);
  assert.ok(graph.get('lib/index.ts')?.includes('lib/errors.ts'), 'export … from');
  assert.ok(graph.get('lib/target.ts')?.includes('backends/jsonl.ts'), 'import … from');
  const missing = [...graph].flatMap(([file, targets]) =>
    targets.filter((t) => t.endsWith('(missing)')).map((t) => `${file} -> ${t}`),
  );
  assert.equal(missing, [], 'every relative import names a source file');
});

test('no import cycle', () => {
  const cycles = cyclesOf(importGraph(ROOT)).map((cycle) => cycle.join(' <-> '));
  assert.equal(
    cycles.filter((cycle) => !KNOWN.includes(cycle)),
    [],
  );
});

test('no layer imports one above it', () => {
  const upward: string[] = [];
  for (const [file, targets] of importGraph(ROOT))
    for (const target of targets)
      if (!MAY_IMPORT[layerOf(file)].includes(layerOf(target)))
        upward.push(`${file} (${layerOf(file)}) -> ${target} (${layerOf(target)})`);
  assert.equal(
    upward.filter((edge) => !KNOWN.includes(edge)),
    [],
  );
});

test.run();
