/**
 * The `COPY` reader (`copy-stream.ts`) reads node-postgres's connection below its API: this fails
 * when the installed pg, or package.json's pin of it, is not the version it was written for; and
 * a connection of another shape is refused in words, with nothing sent, on a fake connection and
 * through a real client whose connection is made to lack what the copy needs.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CopyOut, PG_VERSION } from '../../backends/postgres/copy-stream.js';
import { ROOT } from '../support/packed.js';
import { pgServer } from '../support/pg-cluster.js';

const require = createRequire(import.meta.url);

test(`the installed pg and package.json's pin are ${PG_VERSION}, the version the COPY reader was written for`, () => {
  const installed = (JSON.parse(readFileSync(require.resolve('pg/package.json'), 'utf8')) as { version: string })
    .version;
  assert.is(installed, PG_VERSION, 'node_modules/pg: read copy-stream.ts against the new pg, then move PG_VERSION');
  const ours = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: { readonly [name: string]: string };
  };
  assert.is(ours.dependencies.pg, PG_VERSION, 'package.json pins pg exactly');
});

/** What the copy's stream fails with, on `connection`, and the queries it sent. */
async function refusal(connection: unknown): Promise<{ failed: unknown; returned: unknown }> {
  const copy = new CopyOut('COPY ...');
  const returned = copy.submit(connection as pg.Connection);
  // as node-postgres does with an error that submit() returns
  if (returned instanceof Error) copy.handleError(returned);
  let failed: unknown = null;
  try {
    for await (const _ of copy as AsyncIterable<Buffer>) assert.unreachable('no data');
  } catch (e) {
    failed = e;
  }
  return { failed, returned };
}

test('a connection of another shape is refused before anything is sent, saying what it lacks and what to install', async () => {
  const sent: string[] = [];
  const query = (text: string): number => sent.push(text);
  const withReaders = (n: number): PassThrough => {
    const stream = new PassThrough();
    for (let i = 0; i < n; i++) stream.on('data', () => undefined);
    return stream;
  };
  const cases: [unknown, RegExp][] = [
    [{ query }, /its stream has no read\(\)/],
    [{ stream: withReaders(1) }, /it has no query\(\)/],
    [{ stream: { on: () => undefined }, query }, /its stream has no read\(\)/],
    [{ stream: withReaders(0), query }, /its stream has 0 readers of its data/],
    [{ stream: withReaders(2), query }, /its stream has 2 readers of its data/],
  ];
  for (const [connection, why] of cases) {
    const { failed, returned } = await refusal(connection);
    assert.ok(returned instanceof Error, 'submit() returns the error');
    assert.is(failed, returned, "the copy's stream fails with it");
    assert.match((failed as Error).message, why);
    assert.match(
      (failed as Error).message,
      `it was written for pg ${PG_VERSION}): install pg ${PG_VERSION}, as ledgerstore's package.json pins it`,
    );
  }
  assert.equal(sent, [], 'nothing sent');
});

test("through a real client: a connection without its stream's data reader fails the copy in words, and the client goes on", async () => {
  const client = new pg.Client({ connectionString: (await pgServer()).url });
  await client.connect();
  try {
    const stream = (client as unknown as { connection: { stream: PassThrough } }).connection.stream;
    const [reader] = stream.listeners('data') as ((chunk: Buffer) => void)[];
    assert.ok(reader !== undefined, "pg 8.23.1's connection reads its stream with one data listener");
    // a second reader, as a pg of other internals might have: the copy refuses, nothing sent
    const extra = (): undefined => undefined;
    stream.on('data', extra);
    const copy = client.query(new CopyOut('COPY (SELECT 1) TO STDOUT'));
    let failed: unknown = null;
    try {
      for await (const _ of copy as AsyncIterable<Buffer>) assert.unreachable('no data');
    } catch (e) {
      failed = e;
    }
    assert.match(String(failed), /its stream has 2 readers of its data, not node-postgres's one/);
    stream.removeListener('data', extra);
    assert.equal((await client.query('SELECT 2 AS n')).rows, [{ n: 2 }], 'the client was left as it was');
    // and with the connection as it is, the copy reads
    const chunks: Buffer[] = [];
    for await (const chunk of client.query(new CopyOut('COPY (SELECT 7) TO STDOUT')) as AsyncIterable<Buffer>)
      chunks.push(chunk);
    assert.is(Buffer.concat(chunks).toString(), '7\n');
  } finally {
    await client.end();
  }
});

test.run();
