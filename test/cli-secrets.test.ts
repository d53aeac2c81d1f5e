/**
 * No password typed into a PostgreSQL URI reaches any output. Every command form of the CLI (the
 * table {@link FORMS}: a new command is one more row) is run against the run's PostgreSQL server
 * as a role that must give its password, with the password in the URI in both forms
 * (`?password=` in a socket URI, and `user:password@` with the socket's folder percent-encoded as
 * the host), with the right password and a wrong one, with and without `--json`: in this process
 * with stderr a terminal (so that progress lines are drawn too), and as the real bin (each form
 * once). Every byte written to stdout and stderr is searched for the password. And the library:
 * its errors (their message, stack, every property, their causes) and its ledgers' and logs' names.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { postgresBackend } from '../backends/postgres/index.js';
import { main } from '../lib/cli/main.js';
import { copyLedger } from '../lib/copy.js';
import { backendFor, honchoCodec, Ledger } from '../lib/index.js';
import { printableTarget } from '../lib/printable.js';
import { CLI, COFFEE, FIXTURE, FIXTURE_TEXT, lineOf, type Run, steppingClock } from './support/cli.js';
import { decided, turn } from './support/ledger.js';
import { pgServer, withAdmin } from './support/pg-cluster.js';

/** In every password of this file, and in nothing else: what the output is searched for. */
const TOKEN = randomBytes(8).toString('hex');
const PASSWORD = `s3cret-${TOKEN}`;
const WRONG = `n0t-${TOKEN}`;
const ROLE = `lst_secret_${process.pid}`;
const DB = `lst_secret_${process.pid}`;

/** The password a form is run with, and the form its URI takes. */
type Password = 'right' | 'wrong';
type UriForm = 'query' | 'authority';

/** Where the run's server listens: a socket's folder (or a host) and a port. */
interface Server {
  readonly host: string;
  readonly port: string;
}

/** A log's URI as the role, the password in the form asked for. */
function uriOf(server: Server, form: UriForm, password: string, log: string, database = DB): string {
  const host = encodeURIComponent(server.host);
  return form === 'query'
    ? `postgresql:///${database}?host=${host}&port=${server.port}&user=${ROLE}&password=${password}&log=${log}`
    : `postgres://${ROLE}:${password}@${host}:${server.port}/${database}?log=${log}`;
}

let logs = 0;
/** The log that holds the fixture (made once, per URI form). */
const FULL = 'full';

/** What a form's command line is made of, for one run. */
class Place {
  readonly dir = mkdtempSync(join(tmpdir(), 'ledgerstore-secrets-'));
  /** A JSONL ledger that holds the fixture. */
  readonly file = join(this.dir, 'honcho.jsonl');
  private n = 0;

  constructor(
    private readonly server: Server,
    readonly form: UriForm,
    readonly password: Password,
  ) {
    writeFileSync(this.file, FIXTURE_TEXT);
  }

  /** The URI of log `log` (by default the one that holds the fixture). */
  target(log = FULL): string {
    return uriOf(this.server, this.form, this.password === 'right' ? PASSWORD : WRONG, log);
  }
  /** A log nobody has written. */
  fresh(): string {
    logs++;
    return this.target(`fresh${logs}`);
  }
  /** A log of its own that holds the fixture (copied with the right password, whatever this run's). */
  async filled(): Promise<string> {
    logs++;
    const log = `fresh${logs}`;
    await copyLedger(backendFor(this.file), backendFor(uriOf(this.server, this.form, PASSWORD, log)));
    return this.target(log);
  }
  /** A database that is not there. */
  noDatabase(): string {
    return uriOf(this.server, this.form, this.password === 'right' ? PASSWORD : WRONG, FULL, `${DB}_none`);
  }
  /** A path in this run's folder that nothing is at. */
  path(name: string): string {
    this.n++;
    return join(this.dir, `${name}-${this.n}`);
  }
  /** A read model of the fixture's log, built (with the right password, whatever this run's). */
  async builtIndex(): Promise<string> {
    const folder = this.path('built-index');
    const notices: string[] = [];
    const ledger = await Ledger.open(uriOf(this.server, this.form, PASSWORD, FULL), {
      readOnly: true,
      index: folder,
      waitForIndex: true,
      onNotice: (notice) => notices.push(notice),
    });
    await ledger.close();
    assert.not.ok(notices.join('\n').includes(TOKEN), `the read model's notices: ${notices.join('\n')}`);
    return folder;
  }
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One command form of the table. */
interface Form {
  readonly name: string;
  readonly args: (place: Place) => readonly string[] | Promise<readonly string[]>;
  /** The exit status with the right password: the run is checked to take the path it is meant to. */
  readonly code: number;
  /** The exit status with a wrong one (default 1: the server refuses the login). */
  readonly wrong?: number;
  /** Whether it is run with `--json` too. */
  readonly json?: boolean;
  readonly input?: string;
  /** When to stop it with SIGINT (`follow`), given what it wrote so far. */
  readonly stop?: (stdout: string, stderr: string) => boolean;
}

const ITEM = '{"type":"turn","session":"chat-1","turn":3}';
const NEW_TURN = lineOf(decided(turn('secrets', 1)));
/** `follow` stops once it has printed the fixture's records, or said it waits. */
const printedAll = (stdout: string): boolean => stdout.split('\n').length > FIXTURE.length;
const saidWaiting = (_: string, stderr: string): boolean => /waiting for record/.test(stderr);

/** Every command form, on success and on failure. */
const FORMS: readonly Form[] = [
  { name: 'verify', args: (p) => ['verify', p.target()], code: 0, json: true },
  { name: 'verify --index', args: (p) => ['verify', p.target(), '--index', p.path('index')], code: 0, json: true },
  { name: 'verify, a log nobody wrote', args: (p) => ['verify', p.fresh()], code: 1, json: true },
  { name: 'verify, no such database', args: (p) => ['verify', p.noDatabase()], code: 1, json: true },
  { name: 'counts', args: (p) => ['counts', p.target()], code: 0, json: true },
  { name: 'counts --index', args: (p) => ['counts', p.target(), '--index', p.path('index')], code: 0, json: true },
  { name: 'outbox', args: (p) => ['outbox', p.target()], code: 0, json: true },
  { name: 'sent-ids', args: (p) => ['sent-ids', p.target(), ITEM], code: 0, json: true },
  { name: 'sent-ids, a bad item', args: (p) => ['sent-ids', p.target(), '{"type":'], code: 2, wrong: 2 },
  { name: 'conclusion', args: (p) => ['conclusion', p.target(), 'trusted', COFFEE], code: 0, json: true },
  {
    name: 'conclusion, a bad workspace',
    args: (p) => ['conclusion', p.target(), 'nowhere', COFFEE],
    code: 2,
    wrong: 2,
  },
  { name: 'follow', args: (p) => ['follow', p.target(), '--from', '0'], code: 130, json: true, stop: printedAll },
  {
    name: 'follow, waiting',
    args: (p) => ['follow', p.target(), '--from', '99'],
    code: 130,
    json: true,
    stop: saidWaiting,
  },
  { name: 'follow, a bad --from', args: (p) => ['follow', p.target(), '--from', 'x'], code: 2, wrong: 2 },
  { name: 'append', args: (p) => ['append', p.fresh()], code: 0, json: true, input: `${FIXTURE_TEXT}\n` },
  { name: 'append, a bad line', args: (p) => ['append', p.fresh()], code: 1, json: true, input: 'not a record\n' },
  {
    name: 'append, a refused record',
    args: (p) => ['append', p.target()],
    code: 1,
    json: true,
    input: lineOf(FIXTURE[0] as (typeof FIXTURE)[number]),
  },
  {
    name: 'check --ledger',
    args: (p) => ['check', '--ledger', p.target()],
    code: 1,
    json: true,
    input: `${NEW_TURN}${lineOf(FIXTURE[0] as (typeof FIXTURE)[number])}not a record\n`,
  },
  { name: 'copy into it', args: (p) => ['copy', p.file, p.fresh()], code: 0, json: true },
  { name: 'copy out of it', args: (p) => ['copy', p.target(), p.path('copy.jsonl')], code: 0, json: true },
  { name: 'copy from it to another', args: (p) => ['copy', p.target(), p.fresh()], code: 0, json: true },
  { name: 'copy into a log that holds records', args: (p) => ['copy', p.file, p.target()], code: 1, json: true },
  { name: 'export', args: (p) => ['export', p.target()], code: 0 },
  { name: 'index build', args: (p) => ['index', 'build', p.target(), '--index', p.path('index')], code: 0 },
  {
    name: 'index status',
    args: async (p) => ['index', 'status', p.target(), '--index', await p.builtIndex()],
    code: 0,
    json: true,
  },
  { name: 'index rebuild', args: (p) => ['index', 'rebuild', p.target(), '--index', p.path('index')], code: 0 },
  { name: 'gen', args: (p) => ['gen', p.fresh(), '--records', '20'], code: 0, json: true },
  {
    name: 'gen onto a log that holds records',
    args: (p) => ['gen', p.target(), '--records', '5'],
    code: 1,
    json: true,
  },
  { name: 'drop without --yes', args: (p) => ['drop', p.target()], code: 2 },
  { name: 'drop, a log nobody wrote', args: (p) => ['drop', p.fresh(), '--yes'], code: 1 },
  { name: 'drop --yes', args: async (p) => ['drop', await p.filled(), '--yes'], code: 0 },
  // usage mistakes that quote what was typed
  { name: 'an unknown command', args: (p) => [p.target()], code: 2, wrong: 2 },
  { name: 'help of an unknown command', args: (p) => ['help', p.target()], code: 2, wrong: 2 },
  { name: 'an argument too many', args: (p) => ['verify', p.target(), p.target()], code: 2, wrong: 2 },
  {
    name: 'index without its action',
    args: (p) => ['index', p.target(), 'status', '--index', p.path('index')],
    code: 2,
    wrong: 2,
  },
  { name: 'an unknown flag', args: (p) => ['counts', p.target(), '--nope'], code: 2, wrong: 2 },
  { name: 'a URI after a stray dash', args: (p) => ['counts', `-${p.target()}`], code: 2, wrong: 2 },
  { name: 'a URI for a number', args: (p) => ['follow', p.file, '--from', p.target()], code: 2, wrong: 2 },
  { name: 'a URI for an item', args: (p) => ['sent-ids', p.file, p.target()], code: 2, wrong: 2 },
  { name: 'a URI for a workspace', args: (p) => ['conclusion', p.file, p.target(), COFFEE], code: 2, wrong: 2 },
  { name: 'a flag with a URI for its value', args: (p) => ['counts', `--records=${p.target()}`], code: 2, wrong: 2 },
  { name: '--help', args: (p) => ['verify', p.target(), '--help'], code: 0, wrong: 0 },
];

/** A stream that hands each chunk written to it to `take`. */
const sink = (take: (text: string) => void): Writable =>
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      take(chunk.toString('utf8'));
      done();
    },
  });

/** Past this, a run that waits for something (a `follow` that never says it) is stopped and fails. */
const DEADLINE_MS = 60_000;

/** Runs the command line in this process, stderr a terminal, stopped by SIGINT once `stop` holds. */
async function inProcess(args: readonly string[], form: Form): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const signals = new EventEmitter();
  let stopped = false;
  const check = (): void => {
    if (stopped || form.stop === undefined || !form.stop(stdout, stderr)) return;
    stopped = true;
    signals.emit('SIGINT', 'SIGINT');
  };
  const deadline = setTimeout(() => signals.emit('SIGTERM', 'SIGTERM'), DEADLINE_MS);
  try {
    const code = await main(args, {
      stdin: Readable.from(form.input === undefined ? [] : [Buffer.from(form.input)]),
      stdout: sink((text) => {
        stdout += text;
        check();
      }),
      stderr: sink((text) => {
        stderr += text;
        check();
      }),
      stderrIsTTY: true,
      stderrColumns: 400,
      signals,
      now: steppingClock(),
    });
    return { code, stdout, stderr };
  } finally {
    clearTimeout(deadline);
  }
}

/** Runs the real bin, stopped by SIGINT once `stop` holds. */
function asProcess(args: readonly string[], form: Form): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let stopped = false;
    const check = (): void => {
      if (stopped || form.stop === undefined || !form.stop(stdout, stderr)) return;
      stopped = true;
      child.kill('SIGINT');
    };
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      check();
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      check();
    });
    const deadline = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(form.input ?? '');
  });
}

/** Fails with the lines that hold the password, if any does. */
function noPassword(run: Run, what: string): void {
  const leaks = `${run.stdout}\n${run.stderr}`.split(/[\n\r]/).filter((line) => line.includes(TOKEN));
  assert.equal(leaks, [], `${what}: the password is written`);
}

let setUp: Promise<Server> | null = null;

/** The role, its database, and the fixture's log in it (once for each URI form). */
function server(): Promise<Server> {
  setUp ??= (async () => {
    const url = new URL((await pgServer()).url);
    const found: Server = {
      host: url.searchParams.get('host') ?? url.hostname,
      port: url.searchParams.get('port') ?? (url.port === '' ? '5432' : url.port),
    };
    await withAdmin(async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${ROLE}`);
      await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
      await admin.query(`CREATE DATABASE ${DB} OWNER ${ROLE}`);
    });
    const ledger = await Ledger.open(uriOf(found, 'query', PASSWORD, FULL));
    for (const record of FIXTURE) await ledger.append(record);
    await ledger.close();
    // the same log through the other form: a check that both reach the server
    const other = await Ledger.open(uriOf(found, 'authority', PASSWORD, FULL), { readOnly: true });
    assert.is(other.size, FIXTURE.length, 'the fixture, seen through user:password@');
    await other.close();
    return found;
  })();
  return setUp;
}

test.after(async () => {
  if (setUp === null) return;
  await withAdmin(async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${ROLE}`);
  });
});

/** Runs every form of the table as `runner` runs it, for each URI form, password and `--json`. */
async function everyForm(
  runner: (args: readonly string[], form: Form) => Promise<Run>,
  variants: (form: Form, i: number) => readonly { uri: UriForm; password: Password; json: boolean }[],
): Promise<void> {
  const srv = await server();
  for (const [i, form] of FORMS.entries()) {
    for (const { uri, password, json } of variants(form, i)) {
      const place = new Place(srv, uri, password);
      try {
        const args = [...(await form.args(place)), ...(json ? ['--json'] : [])];
        const what = `${form.name} (${uri} URI, ${password} password${json ? ', --json' : ''})`;
        const run = await runner(args, form);
        noPassword(run, what);
        const expected = password === 'right' ? form.code : (form.wrong ?? 1);
        assert.is(run.code, expected, `${what}: exit status; stderr: ${run.stderr}`);
      } finally {
        place.remove();
      }
    }
  }
}

test('in process: no command form writes the password, in either URI form, right or wrong, with or without --json', async () => {
  await everyForm(inProcess, (form) =>
    (['query', 'authority'] as const).flatMap((uri) =>
      (['right', 'wrong'] as const).flatMap((password) =>
        (form.json === true ? [false, true] : [false]).map((json) => ({ uri, password, json })),
      ),
    ),
  );
});

test('the real bin: no command form writes the password (each form once, the password right or wrong)', async () => {
  // every byte the process writes, whoever writes it (Node's own warnings and crash reports
  // included), for each command's path once: the in-process test above runs every combination,
  // so here the password, the URI form and --json alternate down the table, each combination of
  // the first two in every fourth form
  await everyForm(asProcess, (form, i) => [
    {
      uri: (i >> 1) % 2 === 0 ? 'query' : 'authority',
      password: i % 2 === 0 ? 'right' : 'wrong',
      json: form.json === true && (i >> 2) % 2 === 0,
    },
  ]);
});

test('the CLI still names the target, as typed but for its password', async () => {
  const srv = await server();
  for (const uri of ['query', 'authority'] as const) {
    const place = new Place(srv, uri, 'right');
    try {
      const target = place.target();
      const shown = printableTarget(target);
      assert.ok(!shown.includes(TOKEN));
      const plain = await inProcess(['verify', target], { name: 'verify', args: () => [], code: 0 });
      assert.ok(plain.stdout.startsWith(`${shown}: ok, 10 records`), plain.stdout);
      const json = await inProcess(['verify', target, '--json'], { name: 'verify', args: () => [], code: 0 });
      assert.is((JSON.parse(json.stdout) as { ledger: string }).ledger, shown);
    } finally {
      place.remove();
    }
  }
});

/** Everything an error holds that a program may print: message, stack, properties, causes. */
function noPasswordIn(error: unknown, what: string): void {
  const text = inspect(error, { depth: 6, showHidden: false });
  assert.not.ok(text.includes(TOKEN), `${what}: the password is in the error: ${text}`);
  assert.not.ok(String(error).includes(TOKEN), `${what}: String(error)`);
  const report = (error as { report?: unknown }).report;
  assert.not.ok(typeof report === 'string' && report.includes(TOKEN), `${what}: its report`);
}

async function thrown(body: () => unknown): Promise<unknown> {
  try {
    await body();
  } catch (e) {
    return e;
  }
  return assert.unreachable('no error') as never;
}

test('the library: a target that names no log is refused without its password', async () => {
  for (const target of [
    `postgres://u:${TOKEN}@[db/x`,
    `postgres://u:${TOKEN}@db/x?log=a&log=b`,
    `postgresql:///x?password=${TOKEN}&log=a&log=b`,
    `postgresql:///x?password=${TOKEN}&log=two%20words`,
    `postgresql:///x?log=a&schema=Bad&PASSWORD=${TOKEN}`,
    `postgres://u:pa/${TOKEN}@db/x`,
    `postgres://u:pa?${TOKEN}@db/x`,
    `postgresql://bob:${TOKEN}@/x?host=/run/postgresql`,
    `postgres:u:${TOKEN}@db/x`,
    `postgresql:/u:${TOKEN}@db/x`,
  ]) {
    const e = await thrown(() => backendFor(target));
    assert.is((e as { code?: unknown }).code, 'LEDGER_BAD_TARGET', `${target}: ${String(e)}`);
    noPasswordIn(e, target);
    const opened = await thrown(() => Ledger.open(target, { readOnly: true }));
    noPasswordIn(opened, target);
  }
});

test("the library: a ledger's and a log's name, and the errors of an open, a copy and a read model, leave the password out", async () => {
  const srv = await server();
  for (const uri of ['query', 'authority'] as const) {
    const target = uriOf(srv, uri, PASSWORD, FULL);
    const backend = postgresBackend(target, { codec: honchoCodec });
    assert.not.ok(backend.name.includes(TOKEN), backend.name);
    const notices: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-secrets-'));
    try {
      const ledger = await Ledger.open(target, {
        readOnly: true,
        index: join(dir, 'index'),
        waitForIndex: true,
        onNotice: (notice) => notices.push(notice),
      });
      assert.is(ledger.size, FIXTURE.length);
      assert.not.ok(ledger.name.includes(TOKEN), ledger.name);
      noPasswordIn(await thrown(() => ledger.append(FIXTURE[0] as (typeof FIXTURE)[number])), 'append read-only');
      await ledger.close();
      noPasswordIn(await thrown(() => ledger.append(FIXTURE[0] as (typeof FIXTURE)[number])), 'a closed ledger');
      assert.not.ok(notices.join('\n').includes(TOKEN), notices.join('\n'));
      const file = join(dir, 'honcho.jsonl');
      writeFileSync(file, FIXTURE_TEXT);
      noPasswordIn(await thrown(() => copyLedger(backendFor(file), backendFor(target))), 'a copy into a full log');
      const wrong = uriOf(srv, uri, WRONG, FULL);
      noPasswordIn(await thrown(() => Ledger.open(wrong)), 'a wrong password');
      noPasswordIn(await thrown(() => Ledger.open(wrong, { readOnly: true })), 'a wrong password, read-only');
      noPasswordIn(await thrown(() => Ledger.open(uriOf(srv, uri, PASSWORD, FULL, `${DB}_none`))), 'no database');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test.run();
