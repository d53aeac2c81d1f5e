/**
 * The docs speak to a user of the package, who has no issue tracker of ours: no page names an
 * issue by its number (an issue's text belongs in a commit, its outcome in the doc itself), and
 * no page points at a path outside the checkout (a clone has nothing beside it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from './support/packed.js';

/** README.md, CHANGELOG.md and every page of docs/ (docs/spec/ too), relative to the checkout. */
function pages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.md'))
      .map((file) => `${dir}/${file}`);
  return ['README.md', 'CHANGELOG.md', ...under('docs')];
}

test('no page of the docs names an issue by its number, or reads a path beside the checkout', () => {
  const found: string[] = [];
  for (const page of pages()) {
    // the spec is memoryd's own text, quoted whole: its task numbers are its own
    if (page.startsWith('docs/spec/')) continue;
    readFileSync(join(ROOT, page), 'utf8')
      .split('\n')
      .forEach((line, n) => {
        if (/\bissues? #?\d+/i.test(line)) found.push(`${page}:${n + 1}: ${line.trim()}`);
        if (/\.\.\/shared\b/.test(line)) found.push(`${page}:${n + 1}: ${line.trim()}`);
      });
  }
  assert.ok(pages().length > 5, 'the pages were found');
  assert.equal(found, []);
});

test.run();
