/**
 * Where ledgerstore goes below a dependency's public API, it is guarded: these tests fail when
 * the installed version moves from the one the reach was written for (package.json pins them),
 * and check that the fallback to the public API stores exactly what the reach stores.
 *
 * - abstract-level's chained batch `_put`/`_del`/`_write` on classic-level's batch
 *   (lib/projections/database.ts, for read-model builds).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { installedVersion, NATIVE_BATCH_VERSIONS, nativeBatchOf, VIEW } from '../lib/projections/database.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

test('abstract-level and classic-level are the versions the native batch was written for', () => {
  for (const name of ['abstract-level', 'classic-level'] as const)
    assert.is(
      installedVersion(name),
      NATIVE_BATCH_VERSIONS[name],
      `${name} moved: read lib/projections/database.ts's NativeBatch against its chained batch, then move NATIVE_BATCH_VERSIONS`,
    );
});

test('the native batch is taken only from a class that defines its calls, and under those versions', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'public-paths-'));
  const db = new ClassicLevel<Uint8Array, Uint8Array>(join(dir, 'db'), VIEW);
  const memory = new MemoryLevel<Uint8Array, Uint8Array>(VIEW);
  try {
    await db.open();
    const classic = db.batch();
    assert.ok(nativeBatchOf(classic) !== null, "classic-level's batch");
    assert.is(nativeBatchOf(classic, false), null, 'another version: the public batch');
    await classic.close();
    // an abstract-level batch that leaves _put and the rest to the base class's do-nothing ones
    const bare = Object.create(Object.getPrototypeOf(Object.getPrototypeOf(classic))) as object;
    assert.is(nativeBatchOf(bare), null, "the base class's calls are not a batch's");
    assert.is(nativeBatchOf(Object.create(null) as object), null);
    await memory.open();
    const other = memory.batch();
    // memory-level's batch is abstract-level's default one, which has no calls of its own to take
    assert.is(nativeBatchOf(other), null, "memory-level's batch");
    await other.close();
  } finally {
    await db.close();
    await memory.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the native batch and the public one store the same rows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'public-paths-'));
  const rows = Array.from({ length: 500 }, (_, n) => [bytes(`k${n % 97}-${n}`), bytes(`v${n}`)] as const);
  const gone = rows.filter((_, n) => n % 7 === 0).map(([key]) => key);
  const stored: string[][] = [];
  try {
    for (const path of ['native', 'public'] as const) {
      const db = new ClassicLevel<Uint8Array, Uint8Array>(join(dir, path), VIEW);
      await db.open();
      const batch = db.batch();
      const native = path === 'native' ? nativeBatchOf(batch) : null;
      if (path === 'native') assert.ok(native !== null);
      for (const [key, value] of rows) native === null ? batch.put(key, value, VIEW) : native._put(key, value);
      for (const key of gone) native === null ? batch.del(key, VIEW) : native._del(key);
      if (native === null) await batch.write({ sync: true });
      else {
        await native._write({ sync: true });
        await native.close();
      }
      const seen: string[] = [];
      for await (const [key, value] of db.iterator(VIEW))
        seen.push(`${Buffer.from(key).toString()}=${Buffer.from(value).toString()}`);
      stored.push(seen);
      await db.close();
    }
    assert.is(stored[0]?.length, rows.length - gone.length);
    assert.equal(stored[0], stored[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
