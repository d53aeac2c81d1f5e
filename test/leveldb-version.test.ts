/**
 * The folder check reads LevelDB's own files as LevelDB 1.20, bundled with classic-level 3.0.0,
 * writes them (`lib/leveldb/version.ts`). These tests fail when the installed classic-level, or
 * the LevelDB it bundles, moves, so that the check is looked at again before it misreads; and
 * they hold the refusal under another version to what it says.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isLedgerError } from '../lib/errors.js';
import { inspectFolder } from '../lib/leveldb/folder.js';
import {
  assertSupportedVersions,
  bundledHeader,
  installedVersions,
  LevelDbVersionError,
  levelDbVersionOf,
  versionRefusal,
  WRITTEN_FOR,
} from '../lib/leveldb/version.js';
import { ROOT } from './support/packed.js';

const CLASSIC = join(ROOT, 'node_modules', 'classic-level');

test('the installed classic-level is the one the folder check was written for, and package.json pins it', () => {
  const installed = JSON.parse(readFileSync(join(CLASSIC, 'package.json'), 'utf8')) as { version: string };
  assert.is(installed.version, '3.0.0');
  assert.is(WRITTEN_FOR.classicLevel, '3.0.0');
  const ours = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: { [name: string]: string };
  };
  assert.is(ours.dependencies['classic-level'], '3.0.0', 'pinned exactly, no range');
});

test('the LevelDB classic-level bundles is 1.20, read from its include/leveldb/db.h', () => {
  const header = bundledHeader(CLASSIC);
  assert.ok(header !== null, 'classic-level ships its LevelDB sources under deps/leveldb');
  assert.is(levelDbVersionOf(readFileSync(header, 'utf8')), '1.20');
  assert.is(WRITTEN_FOR.levelDb, '1.20');
  assert.equal(installedVersions(), { classicLevel: '3.0.0', levelDb: '1.20' });
});

test('levelDbVersionOf reads kMajorVersion and kMinorVersion, and nothing else', () => {
  assert.is(levelDbVersionOf('static const int kMajorVersion = 1;\nstatic const int kMinorVersion = 23;\n'), '1.23');
  assert.is(levelDbVersionOf('static const int kMajorVersion = 1;\n'), null);
  assert.is(bundledHeader(join(ROOT, 'no-such-package')), null);
});

test('under the versions it was written for, the check goes on', () => {
  assert.is(versionRefusal('/srv/x.level', WRITTEN_FOR), null);
  // without bundled sources the LevelDB version is classic-level's to vouch for
  assert.is(versionRefusal('/srv/x.level', { classicLevel: '3.0.0', levelDb: null }), null);
});

test('under another classic-level or LevelDB, a folder is refused, with a code, what and a runbook pointer', () => {
  for (const installed of [
    { classicLevel: '3.1.0', levelDb: '1.20' },
    { classicLevel: '3.0.0', levelDb: '1.23' },
    { classicLevel: '2.0.0', levelDb: null },
  ]) {
    const refusal = versionRefusal('/srv/x.level', installed);
    assert.ok(refusal instanceof LevelDbVersionError);
    assert.ok(isLedgerError(refusal, 'LEDGER_BAD_TARGET'));
    assert.is(refusal.runbook, 'level-folder-damaged');
    assert.is(
      refusal.message,
      `/srv/x.level: the installed classic-level ${installed.classicLevel} (LevelDB ${installed.levelDb ?? 'of unknown version'}) is not the one this ledgerstore reads LevelDB folders for (classic-level 3.0.0, LevelDB 1.20); ` +
        "nothing was read or changed; install classic-level 3.0.0 (npm ci), as ledgerstore's package.json pins it; see docs/runbook.md#level-folder-damaged",
    );
  }
});

test('the folder check throws the refusal under another version, and goes on under this one', () => {
  assert.throws(
    () => assertSupportedVersions('/srv/x.level', { classicLevel: '4.0.0', levelDb: '1.23' }),
    (e: unknown) => e instanceof LevelDbVersionError && e.folder === '/srv/x.level',
  );
  assertSupportedVersions('/srv/x.level'); // the installed versions: no refusal
  const dir = mkdtempSync(join(tmpdir(), 'leveldb-version-'));
  try {
    assert.is(inspectFolder(join(dir, 'missing.level'), 'ledgerstore/level').state, 'missing');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
