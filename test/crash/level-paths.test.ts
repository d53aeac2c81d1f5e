/**
 * Special files and folders that are not a database's own, at every LevelDB path the CLI takes
 * (issue 10): `level:<path>` (verify, export, append, copy's target, gen's) and `--index <path>`
 * (verify, append, index build, status and rebuild). At each path: a file with
 * bytes, an empty file, a FIFO, a UNIX socket, a symbolic link to a character device
 * (`/dev/null`), a dangling link, a path under a file, the folder of a JSONL ledger, a folder with
 * a LevelDB file name taken by a FIFO (`CURRENT`) or by a folder (`000005.ldb`), a link to the
 * JSONL ledger's folder, and the folder of the other kind of database (a read model given as a
 * ledger, a ledger as a read model). Each command runs in a real process with a watchdog: the
 * first at each path as the real bin, the others in a process that stays up between commands
 * (`cli-host.ts`), which a stuck command gets killed.
 *
 * The promise at every one: the command ends (nothing blocks on a FIFO); it is refused with
 * exit status 1 and a message that names the path and is no stack trace, or (a read of what is
 * not there: a dangling link) reads an empty ledger, or no index, and says so; and nothing at the path is
 * changed: the same entries, types, sizes, times and bytes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  type BigIntStats,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecord, Ledger } from '../../lib/index.js';
import { CliHost } from '../support/cli-host.js';
import { decided, turn } from '../support/ledger.js';
import { reportFigures } from '../support/level-figures.js';

const CLI = fileURLToPath(new URL('../../lib/cli.js', import.meta.url));
const STUCK_MS = 15_000;

/** Everything at `path` as it is: for a folder, each entry; for anything else, its type, size, times and (a file) bytes. */
function stateOf(path: string): string {
  let stat: BigIntStats;
  try {
    stat = lstatSync(path, { bigint: true });
  } catch {
    return 'missing';
  }
  const head = `${stat.mode} ${stat.size} ${stat.mtimeNs} ${stat.ino}`;
  if (stat.isFile()) return `${head} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
  if (!stat.isDirectory()) return head;
  return `${head}\n${readdirSync(path)
    .sort()
    .map((name) => `${name}: ${stateOf(join(path, name))}`)
    .join('\n')}`;
}

const host = new CliHost();
test.after(() => host.stop());

/** Runs the real bin; `input` on stdin. Fails the test if it does not end. */
function cli(args: readonly string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdin.end(input);
    const stuck = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`stuck for ${STUCK_MS / 1000} s: ledgerstore ${args.join(' ')}`));
    }, STUCK_MS);
    child.once('close', (code) => {
      clearTimeout(stuck);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A thing to put at a path. `watch` is what to compare: the path itself, or (a link) what it points to as well. */
interface Kind {
  readonly name: string;
  make(path: string, home: string): Promise<Server | null> | Server | null;
  /** Whether a read through it finds nothing there (an empty ledger), rather than something refused. */
  readonly readsAsNothing?: boolean;
}

function kinds(): Kind[] {
  return [
    { name: 'a file with bytes', make: (p) => (writeFileSync(p, 'some settings\n'), null) },
    { name: 'an empty file', make: (p) => (writeFileSync(p, ''), null) },
    { name: 'a FIFO', make: (p) => (spawnSync('mkfifo', [p]), null) },
    {
      name: 'a UNIX socket',
      make: (p) =>
        new Promise<Server>((resolve) => {
          const server = createServer();
          server.listen(p, () => resolve(server));
        }),
    },
    { name: 'a link to /dev/null', make: (p) => (symlinkSync('/dev/null', p), null) },
    { name: 'a dangling link', make: (p, home) => (symlinkSync(join(home, 'nowhere'), p), null), readsAsNothing: true },
    {
      name: "the JSONL ledger's folder (a link to it)",
      make: (p, home) => (symlinkSync(join(home, 'memory'), p), null),
    },
    {
      name: 'a folder whose CURRENT is a FIFO',
      make: (p) => {
        mkdirSync(p);
        writeFileSync(join(p, 'MANIFEST-000004'), '');
        spawnSync('mkfifo', [join(p, 'CURRENT')]);
        return null;
      },
    },
    {
      name: 'a folder with a folder named 000005.ldb',
      make: (p) => {
        mkdirSync(join(p, '000005.ldb'), { recursive: true });
        return null;
      },
    },
  ];
}

test('special files and folders of others at every LevelDB path the CLI takes: refused, never blocking, nothing changed', async () => {
  const home = mkdtempSync(join(tmpdir(), 'ledgerstore-paths-'));
  const servers: Server[] = [];
  let cases = 0;
  let refused = 0;
  let empty = 0;
  try {
    // memoryd's folder: its JSONL ledger, and files that take LevelDB's names
    const memory = join(home, 'memory');
    mkdirSync(memory);
    const jsonl = join(memory, 'honcho.jsonl');
    const ledger = await Ledger.open(jsonl);
    await ledger.append(decided(turn('chat-1', 1)));
    await ledger.close();
    writeFileSync(join(memory, 'LOG'), "memoryd's own log\n");
    writeFileSync(join(memory, '000005.log'), 'not a write-ahead log');
    // a LevelDB ledger and a read model, each to be given as the other
    const levelLedger = join(home, 'ledger.level');
    const indexFolder = join(home, 'index');
    const both = await Ledger.open(`level:${levelLedger}`, { index: indexFolder, onNotice: () => undefined });
    await both.append(decided(turn('chat-1', 1)));
    await both.close();
    const line = `${encodeRecord(decided(turn('chat-1', 2)))}\n`;
    const commands = (
      path: string,
    ): { readonly args: string[]; readonly input?: string; readonly reads: boolean }[] => [
      { args: ['verify', `level:${path}`], reads: true },
      { args: ['export', `level:${path}`], reads: true },
      { args: ['append', `level:${path}`], input: line, reads: false },
      { args: ['copy', jsonl, `level:${path}`], reads: false },
      { args: ['gen', `level:${path}`, '--records', '10'], reads: false },
      { args: ['verify', jsonl, '--index', path], reads: false },
      { args: ['append', jsonl, '--index', path], input: line, reads: false },
      { args: ['index', 'build', jsonl, '--index', path], reads: false },
      { args: ['index', 'status', jsonl, '--index', path], reads: true },
      { args: ['index', 'rebuild', jsonl, '--index', path], reads: false },
    ];
    const places: {
      readonly name: string;
      readonly path: string;
      readonly readsAsNothing: boolean;
      readonly only?: 'level' | 'index';
    }[] = [];
    for (const [n, kind] of kinds().entries()) {
      const path = join(home, `place-${n}`);
      const server = await kind.make(path, home);
      if (server !== null) servers.push(server);
      places.push({ name: kind.name, path, readsAsNothing: kind.readsAsNothing ?? false });
    }
    writeFileSync(join(home, 'a-file'), 'x');
    places.push({ name: 'a path under a file', path: join(home, 'a-file', 'child'), readsAsNothing: false });
    places.push({ name: "the JSONL ledger's folder", path: memory, readsAsNothing: false });
    places.push({ name: "a read model's folder", path: indexFolder, readsAsNothing: false, only: 'level' });
    places.push({ name: "a LevelDB ledger's folder", path: levelLedger, readsAsNothing: false, only: 'index' });
    for (const place of places) {
      let first = true;
      for (const command of commands(place.path)) {
        const isIndex = command.args.includes('--index');
        if (place.only === 'level' && isIndex) continue;
        if (place.only === 'index' && !isIndex) continue;
        const before = [stateOf(place.path), stateOf(memory)];
        const context = `paths harness (${place.name}: ledgerstore ${command.args.join(' ')})`;
        const run = first ? cli : (args: readonly string[], input?: string) => host.run(args, input);
        first = false;
        const { code, stdout, stderr } = await run(command.args, command.input);
        cases++;
        assert.not.match(stderr, /\n\s+at /, `${context}: a stack trace: ${stderr}`);
        if (code === 0) {
          assert.ok(place.readsAsNothing && command.reads, `${context}: it succeeded: ${stderr}`);
          assert.match(`${stdout}${stderr}`, /no such folder/, `${context}: read as nothing there, without saying so`);
          empty++;
        } else {
          assert.is(code, 1, `${context}: exit status ${code}: ${stderr}`);
          assert.ok(stderr.includes(place.path), `${context}: the refusal does not name the path: ${stderr}`);
          refused++;
        }
        assert.equal([stateOf(place.path), stateOf(memory)], before, `${context}: something at the path was changed`);
      }
    }
  } finally {
    for (const server of servers) server.close();
    rmSync(home, { recursive: true, force: true });
  }
  reportFigures(
    'paths',
    `${cases} commands at 13 kinds of path: ${refused} refused with the path named, ${empty} read as nothing there and said so (a dangling link), none blocked, nothing changed`,
  );
});

test.run();
