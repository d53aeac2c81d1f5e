/**
 * Opens that cost what the file costs: a JSONL open reads into buffers no larger than the file
 * (a large file keeps its chunk), so that many opens of a small ledger in one process stay small,
 * where each took 8 MiB of shared memory before (300 opens of a 20 KB ledger grew a process by
 * about 1.3 GiB). Measured by counts, in a child process, never by time.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type Fd, type FileIO, honchoCodec, jsonlBackend, Ledger, nodeFileIO } from '../lib/index.js';
import { decided, turn, withHome } from './support/ledger.js';

const MIB = 1024 * 1024;
const OPENER = fileURLToPath(new URL('./support/open-many.js', import.meta.url));

/** Writes a ledger of `records` decided turns at `target`. */
async function ledgerOf(target: string, records: number): Promise<void> {
  const ledger = await Ledger.open(target);
  try {
    for (let n = 0; n < records; n++) await ledger.append(decided(turn('chat-1', n)));
  } finally {
    await ledger.close();
  }
}

/** How much a child process grew over `times` opens and closes of `target` (`support/open-many.ts`). */
function growthOver(target: string, times: number): { rss: number; arrayBuffers: number } {
  const out = execFileSync(process.execPath, ['--expose-gc', OPENER, target, String(times)], { encoding: 'utf8' });
  return JSON.parse(out) as { rss: number; arrayBuffers: number };
}

/** The node file layer, noting in `widest` the longest buffer any read was given. */
function widestRead(): FileIO & { widest: number } {
  const io = {
    ...nodeFileIO,
    widest: 0,
    read: (fd: Fd, buffer: Uint8Array, offset: number, length: number, position: number): number => {
      io.widest = Math.max(io.widest, buffer.byteLength);
      return nodeFileIO.read(fd, buffer, offset, length, position);
    },
  };
  return io;
}

test('300 opens and closes of a 23 KB JSONL ledger grow the process by far less than 100 MiB', async () => {
  await withHome(async (home) => {
    await ledgerOf(home.path, 140);
    assert.ok(statSync(home.path).size > 20_000, `${statSync(home.path).size} bytes`);
    const { rss, arrayBuffers } = growthOver(home.path, 300);
    assert.ok(rss < 100 * MIB, `the resident memory grew by ${(rss / MIB).toFixed(1)} MiB`);
    assert.ok(arrayBuffers < 32 * MIB, `the array buffers grew by ${(arrayBuffers / MIB).toFixed(1)} MiB`);
  });
});

test('300 opens and closes of a small LevelDB ledger grow the process by far less than 100 MiB', async () => {
  await withHome(async (home) => {
    const target = `level:${join(home.dir, 'ledger.level')}`;
    await ledgerOf(target, 140);
    const { rss, arrayBuffers } = growthOver(target, 300);
    assert.ok(rss < 100 * MIB, `the resident memory grew by ${(rss / MIB).toFixed(1)} MiB`);
    assert.ok(arrayBuffers < 32 * MIB, `the array buffers grew by ${(arrayBuffers / MIB).toFixed(1)} MiB`);
  });
});

test("a JSONL open reads into buffers no longer than the file, and a large file's in whole chunks", async () => {
  await withHome(async (home) => {
    await ledgerOf(home.path, 140);
    const size = statSync(home.path).size;
    const small = widestRead();
    const ledger = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io: small }));
    assert.is(ledger.size, 140);
    await ledger.close();
    assert.ok(small.widest > 0 && small.widest <= size, `a read into ${small.widest} bytes, of a ${size}-byte file`);
    // a chunk smaller than the file: the open reads it in whole chunks, as fast as before
    const chunked = widestRead();
    const chunkSize = 4096;
    const again = await Ledger.open(jsonlBackend(home.path, { codec: honchoCodec, io: chunked, chunkSize }));
    assert.is(again.size, 140);
    await again.close();
    assert.is(chunked.widest, chunkSize);
  });
});

test.run();
