/**
 * The dependencies only some opens need are loaded on their first use (`lib/dependencies.ts`):
 * a read of a JSONL ledger through the CLI's `main` loads none of LevelDB, memory-level, cbor-x
 * and fs-native-extensions; an append loads the lock's addon only; a `level:` read loads
 * classic-level and cbor-x. Each in a fresh process, which runs the command through `main`
 * (`ledgerstore()` of `support/cli.ts`) and says which packages it loaded.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FIXTURE_TEXT, lineOf } from './support/cli.js';
import { decided, turn, withHome } from './support/ledger.js';

/** `ledgerstore()`, the CLI's main in this process (`support/cli.ts`). */
const SUPPORT_CLI = fileURLToPath(new URL('./support/cli.js', import.meta.url));
const WATCHED = ['abstract-level', 'cbor-x', 'classic-level', 'fs-native-extensions', 'memory-level'];

/** Runs `ledgerstore args...` in a fresh process; gives the watched packages it loaded, and its exit status. */
function loadedBy(args: readonly string[], input = ''): { loaded: string[]; code: number } {
  const script = `
    import { createRequire } from 'node:module';
    const { ledgerstore } = await import(${JSON.stringify(SUPPORT_CLI)});
    const { code } = await ledgerstore(${JSON.stringify(args)}, { input: ${JSON.stringify(input)} });
    const loaded = new Set();
    // a package's package.json read for its version is no load of its code
    for (const path of Object.keys(createRequire(import.meta.url).cache).filter((p) => !p.endsWith('/package.json')))
      for (const name of ${JSON.stringify(WATCHED)}) if (path.includes('/node_modules/' + name + '/')) loaded.add(name);
    console.log(JSON.stringify({ loaded: [...loaded].sort(), code }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as { loaded: string[]; code: number };
}

test('a JSONL read loads none of them; an append, the lock alone; a level: ledger, LevelDB and cbor-x', async () => {
  await withHome(async (home) => {
    writeFileSync(home.path, FIXTURE_TEXT);
    assert.equal(loadedBy(['counts', home.path]), { loaded: [], code: 0 }, 'counts of a JSONL ledger');
    assert.equal(loadedBy(['export', home.path]), { loaded: [], code: 0 }, 'export of a JSONL ledger');
    const line = lineOf(decided(turn('loaded', 1)));
    assert.equal(loadedBy(['append', home.path], line), { loaded: ['fs-native-extensions'], code: 0 }, 'an append');
    const level = `level:${home.dir}/ledger.level`;
    assert.equal(loadedBy(['copy', home.path, level]).code, 0, 'the copy to level:');
    const read = loadedBy(['counts', level]);
    assert.is(read.code, 0);
    for (const name of ['abstract-level', 'cbor-x', 'classic-level']) assert.ok(read.loaded.includes(name), name);
  });
});

test.run();
