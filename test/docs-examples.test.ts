/**
 * Every TypeScript example of the docs runs as written: each ```` ```ts ```` block of
 * `README.md` and `docs/*.md`, and each `@example` of `lib/index.ts`, is type-checked under this
 * project's strictness against the built, packed package (as a user's project gets it), and
 * run in a fresh temporary folder; one that does not compile, throws or never ends fails the
 * test. A block may opt out of the run (not of the type check) with a marker and a reason; the
 * test lists the ones it saw.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type CodeBlock, exampleBlocks, MarkerError, markdownBlocks } from './support/code-blocks.js';
import { consumer, ROOT } from './support/packed.js';
import { compile, runProgram, type UserProgram } from './support/user-programs.js';

/** The docs whose examples are checked, relative to the checkout. */
function docs(): { readonly markdown: string[]; readonly typescript: string[] } {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return { markdown: ['README.md', ...pages], typescript: ['lib/index.ts'] };
}

function allBlocks(): CodeBlock[] {
  const { markdown, typescript } = docs();
  const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
  return [
    ...markdown.flatMap((path) => markdownBlocks(path, read(path))),
    ...typescript.flatMap((path) => exampleBlocks(path, read(path))),
  ];
}

const programOf = (block: CodeBlock): UserProgram => ({
  name: `${block.path.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}-L${block.line}`,
  source: block.code,
  origin: { path: block.path, line: block.line },
});

const blocks = suite('docs examples: finding them');

blocks('TypeScript blocks of a page, with the line of their first line of code; other languages are left', () => {
  const page = [
    '# Title',
    '',
    '```ts',
    'const a = 1;',
    '```',
    '',
    '```sh',
    'make test',
    '```',
    '',
    '- a list:',
    '',
    '  ```typescript',
    '  const b = 2;',
    '    const c = 3;',
    '  ```',
    '',
  ].join('\n');
  assert.equal(markdownBlocks('page.md', page), [
    { path: 'page.md', line: 4, code: 'const a = 1;\n', notRun: null },
    { path: 'page.md', line: 14, code: 'const b = 2;\n  const c = 3;\n', notRun: null },
  ]);
});

blocks('a block in a longer fence holds the shorter fences of its text', () => {
  const page = ['````ts', 'const s = `', '```', '`;', '````'].join('\n');
  assert.equal(markdownBlocks('page.md', page), [
    { path: 'page.md', line: 2, code: 'const s = `\n```\n`;\n', notRun: null },
  ]);
});

blocks('an opt-out right before a block keeps its reason, also across a blank line', () => {
  const page = [
    '<!-- example: not run: it sends to a real Honcho -->',
    '```ts',
    'send();',
    '```',
    '<!-- example: not run: waits -->',
    '',
    '```ts',
    'wait();',
    '```',
  ].join('\n');
  assert.equal(
    markdownBlocks('page.md', page).map((b) => b.notRun),
    ['it sends to a real Honcho', 'waits'],
  );
});

blocks('an opt-out without a reason, of another kind, before another language or before nothing is refused', () => {
  const refusal = (page: string[]): string => {
    try {
      markdownBlocks('page.md', page.join('\n'));
    } catch (e) {
      assert.instance(e, MarkerError);
      return (e as Error).message;
    }
    assert.unreachable('accepted');
    return '';
  };
  assert.match(
    refusal(['<!-- example: not run: -->', '```ts', 'x();', '```']),
    /^page\.md:1: an example opts out without a reason/,
  );
  assert.match(
    refusal(['', '<!-- example: skip: it is old -->', '```ts', 'x();', '```']),
    /^page\.md:2: an example marker of an unknown kind/,
  );
  assert.match(
    refusal(['<!-- example: not run: a shell -->', '```sh', 'make', '```']),
    /^page\.md:1: an example marker before a ```sh block/,
  );
  assert.match(
    refusal(['<!-- example: not run: prose -->', 'Some text.', '```ts', 'x();', '```']),
    /^page\.md:1: an example marker that no ```ts block follows/,
  );
  assert.match(
    refusal(['text', '<!-- example: not run: the end -->']),
    /^page\.md:2: an example marker that no ```ts block follows/,
  );
});

blocks('the @example of a doc comment, without its stars, at its line in the file', () => {
  const source = [
    '// a file',
    '/**',
    ' * Opens it.',
    ' *',
    ' * @example',
    ' * ```ts',
    " * const l = await open('x');",
    ' *   await l.close();',
    ' * ```',
    ' * @module',
    ' */',
    'export {};',
    '/** No example here. */',
  ].join('\n');
  assert.equal(exampleBlocks('lib/x.ts', source), [
    { path: 'lib/x.ts', line: 7, code: "const l = await open('x');\n  await l.close();\n", notRun: null },
  ]);
});

blocks('the docs hold examples where this test expects them (a broken finder finds none)', () => {
  const found = allBlocks();
  for (const path of ['README.md', 'docs/testing.md', 'lib/index.ts']) {
    assert.ok(
      found.some((b) => b.path === path),
      `no TypeScript example found in ${path}`,
    );
  }
});

blocks.run();

const examples = suite('docs examples: as written');

examples('every TypeScript example type-checks against the packed package and runs in a fresh folder', () => {
  const found = allBlocks();
  const project = consumer();
  try {
    const programs = found.map(programOf);
    const complaints = compile(project, programs);
    assert.is(complaints, '', `the examples do not type-check:\n${complaints}`);
    const failures: string[] = [];
    found.forEach((block, n) => {
      if (block.notRun !== null) return;
      const run = runProgram(project, programs[n] as UserProgram);
      if (run.failure !== null)
        failures.push(`${block.path}:${block.line}: the example ${run.failure}\n${run.stderr.trim()}`);
    });
    assert.is(failures.join('\n\n'), '', `examples that do not run:\n${failures.join('\n\n')}`);
    const optedOut = found.filter((b) => b.notRun !== null).map((b) => `  ${b.path}:${b.line}: ${b.notRun}`);
    console.log(
      `\n${found.length} doc examples type-checked, ${found.length - optedOut.length} run${optedOut.length === 0 ? '; none opted out' : `; not run:\n${optedOut.join('\n')}`}`,
    );
  } finally {
    project.remove();
  }
});

examples.run();
