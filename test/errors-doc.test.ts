/**
 * `docs/errors.md` cannot drift from the code: it has one heading per code of `LedgerErrorCode`
 * and no other, and under each the classes that carry the code and the runbook entries those
 * classes point to, read from the sources; each entry it links is a heading of the runbook.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from './support/packed.js';

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The codes of the `LedgerErrorCode` union, in the order `lib/errors/base.ts` declares them. */
function declaredCodes(): string[] {
  const union = /export type LedgerErrorCode =([^;]*);/.exec(read('lib/errors/base.ts'));
  assert.ok(union !== null, 'lib/errors/base.ts declares LedgerErrorCode');
  return [...(union[1] as string).matchAll(/'([A-Z_]+)'/g)].map((m) => m[1] as string);
}

/** A class of the sources that carries a code: its name, its code, its runbook entry. */
interface Carrier {
  readonly name: string;
  readonly code: string;
  /** Its runbook entries: one, or those a constructor chooses between (`this.runbook = a ? 'x' : 'y'`). */
  readonly runbooks: readonly string[];
}

/**
 * Every exported class of `lib/` and `backends/` that sets `code` (or inherits it from one that
 * does), with the `runbook` it sets or inherits. Read from the sources: the classes' constructors
 * differ too much to make one of each at run time.
 */
function carriers(): Carrier[] {
  const files = ['lib', 'backends'].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => `${dir}/${file}`),
  );
  const classes = new Map<string, { base: string; code: string | null; runbooks: string[] | null }>();
  for (const file of files) {
    for (const m of read(file).matchAll(/^export (?:abstract )?class (\w+) extends (\w+) \{\n([\s\S]*?)^\}$/gm)) {
      const body = m[3] as string;
      classes.set(m[1] as string, {
        base: m[2] as string,
        code: /^ {2}(?:override )?readonly code(?:: [^=]+)? = '([A-Z_]+)';$/m.exec(body)?.[1] ?? null,
        runbooks: runbooksOf(body),
      });
    }
  }
  const resolved = <F extends 'code' | 'runbooks'>(
    name: string,
    field: F,
  ): (typeof classes extends Map<string, infer C> ? C : never)[F] | null => {
    for (let at = classes.get(name); at !== undefined; at = classes.get(at.base))
      if (at[field] !== null) return at[field];
    return null;
  };
  return [...classes.keys()].flatMap((name) => {
    const code = resolved(name, 'code');
    return code === null ? [] : [{ name, code, runbooks: resolved(name, 'runbooks') ?? [] }];
  });
}

/** The runbook entries a class body sets: a constant field, or the anchors its constructor picks from; `null` when it sets none. */
function runbooksOf(body: string): string[] | null {
  const constant = /^ {2}override readonly runbook(?:: [^=]+)? = '([\w-]+)';$/m.exec(body)?.[1];
  if (constant !== undefined) return [constant];
  const chosen = /^ {4}this\.runbook = (.*);$/m.exec(body)?.[1];
  // the anchors, not the values the choice tests (`during === 'read'`): every anchor has a hyphen
  return chosen === undefined ? null : [...chosen.matchAll(/'([a-z]+(?:-[a-z]+)+)'/g)].map((m) => m[1] as string);
}

/** The page's sections: each `## ` heading with what its "Classes:" and "Runbook:" lines say. */
function documented(): { heading: string; classes: string[]; runbooks: string[] }[] {
  const page = read('docs/errors.md');
  return page
    .split(/^## /m)
    .slice(1)
    .map((section) => {
      const heading = section.slice(0, section.indexOf('\n')).trim();
      const classes = /^Classes: (.*)\.? Runbook:/m.exec(section)?.[1] ?? '';
      const runbook = /Runbook: (.*)\.$/m.exec(section)?.[1] ?? '';
      return {
        heading,
        classes: [...classes.matchAll(/`(\w+)`/g)].map((m) => m[1] as string).sort(),
        runbooks:
          runbook === 'none'
            ? []
            : [...runbook.matchAll(/\[([\w-]+)\]\(runbook\.md#\1\)/g)].map((m) => m[1] as string).sort(),
      };
    });
}

const test = suite('docs/errors.md');

test('one heading per code of LedgerErrorCode, in its order, and no other heading', () => {
  const codes = declaredCodes();
  assert.ok(codes.length >= 10, `codes read from lib/errors/base.ts: ${codes.join(', ')}`);
  assert.equal(
    documented().map((s) => s.heading),
    codes,
  );
});

test('under each code, the classes that carry it and the runbook entries they point to', () => {
  const found = carriers();
  assert.ok(
    found.some((c) => c.name === 'TargetError'),
    'classes in every file of lib/errors/ are found',
  );
  for (const section of documented()) {
    const mine = found.filter((c) => c.code === section.heading);
    assert.equal(section.classes, mine.map((c) => c.name).sort(), `the classes under ${section.heading}`);
    const entries = [...new Set(mine.flatMap((c) => c.runbooks))].sort();
    assert.equal(section.runbooks, entries, `the runbook entries under ${section.heading}`);
  }
});

test('every runbook entry the page links is a heading of the runbook', () => {
  const headings = new Set([...read('docs/runbook.md').matchAll(/^## ([\w-]+)$/gm)].map((m) => m[1] as string));
  const linked = documented().flatMap((s) => s.runbooks);
  assert.ok(linked.length > 0);
  for (const entry of linked) assert.ok(headings.has(entry), `docs/runbook.md has no "## ${entry}"`);
});

test.run();
