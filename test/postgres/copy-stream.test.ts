/**
 * The `COPY ... TO STDOUT` reader (`copy-stream.ts`) against the protocol's bytes, cut into
 * chunks at every size: its stream is the rows' data back to back, the messages it may meet
 * inside a copy skipped, and what follows the copy (or its error) handed back to node-postgres
 * whole, wherever the chunks cut the messages.
 */
import { PassThrough } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import type * as pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CopyOut } from '../../backends/postgres/copy-stream.js';

/** A protocol message: its code, then its length (itself included) and its body. */
function message(code: string, body: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const header = Buffer.alloc(5);
  header.write(code, 0, 'latin1');
  header.writeUInt32BE(bytes.length + 4, 1);
  return Buffer.concat([header, bytes]);
}

const rows = ['{"a":1}\n', '', '{"b":"two"}\n', 'x'.repeat(300) + '\n', '{"c":3}\n'];

/** The copy's bytes, and how many lines they hold. */
function copyBytes(): { stream: Buffer; data: Buffer } {
  const [first, second, ...rest] = rows.map((row) => message('d', row));
  const stream = Buffer.concat([
    message('H', Buffer.from([0, 0, 0])),
    first as Buffer,
    message('N', 'a notice between rows'),
    second as Buffer,
    message('S', 'TimeZone\0UTC\0'),
    ...rest,
    message('c', ''),
  ]);
  return { stream, data: Buffer.from(rows.join('')) };
}

/** Feeds `bytes` in chunks of `size` to a copy on a fake connection; what the copy's stream gave, and what node-postgres was handed back. */
async function run(bytes: Buffer, size: number): Promise<{ out: Buffer; handed: Buffer; failed: unknown }> {
  const socket = new PassThrough();
  const handed: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => handed.push(chunk));
  const copy = new CopyOut('COPY ...', { highWaterMark: 16 });
  const queries: string[] = [];
  copy.submit({ stream: socket, query: (text: string) => queries.push(text) } as unknown as pg.Connection);
  assert.equal(queries, ['COPY ...']);
  const out: Buffer[] = [];
  let failed: unknown = null;
  const reading = (async () => {
    try {
      for await (const chunk of copy as AsyncIterable<Buffer>) out.push(Buffer.from(chunk));
    } catch (e) {
      failed = e;
    }
  })();
  for (let at = 0; at < bytes.length; at += size) {
    socket.write(bytes.subarray(at, at + size));
    await setImmediate();
  }
  await setImmediate();
  if (failed === null && !copy.readableEnded) copy.handleError(new Error('the server failed'));
  await reading;
  return { out: Buffer.concat(out), handed: Buffer.concat(handed), failed };
}

test('the rows come back to back, whatever the chunks, and what follows the copy goes back to node-postgres whole', async () => {
  const { stream, data } = copyBytes();
  const after = Buffer.concat([message('C', 'COPY 5\0'), message('Z', 'I')]);
  for (let size = 1; size <= stream.length + after.length; size++) {
    const { out, handed, failed } = await run(Buffer.concat([stream, after]), size);
    assert.is(failed, null, `chunks of ${size}`);
    assert.is(out.toString(), data.toString(), `chunks of ${size}: the rows`);
    assert.is(handed.toString('latin1'), after.toString('latin1'), `chunks of ${size}: what follows`);
  }
});

test("an error in the middle of a copy goes to node-postgres from its first byte, and the copy's stream fails", async () => {
  const { stream } = copyBytes();
  const cut = stream.indexOf(message('d', rows[2] as string));
  const error = Buffer.concat([message('E', 'SERROR\0Mcanceled\0\0'), message('Z', 'I')]);
  for (let size = 1; size <= cut + error.length; size++) {
    const { out, handed, failed } = await run(Buffer.concat([stream.subarray(0, cut), error]), size);
    assert.ok(failed instanceof Error, `chunks of ${size}: the stream fails`);
    assert.is(out.toString(), rows.slice(0, 2).join(''), `chunks of ${size}: the rows before the error`);
    assert.is(handed.toString('latin1'), error.toString('latin1'), `chunks of ${size}: the error, whole`);
  }
});

test.run();
