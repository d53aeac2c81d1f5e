/**
 * ledgerstore installs like a package: from `npm pack` (what a registry serves) and from a git
 * URL (which runs `prepare` to build), a user's project gets a working `ledgerstore` bin, typed
 * imports, the runbook its errors point at, the license, and the sources its source maps name.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Consumer, consumer, packInto, ROOT, TSC } from './support/packed.js';

const USE = `import { Ledger, isLedgerError, type Counts } from 'ledgerstore';
import { memoryBackend } from 'ledgerstore/backends/memory';
import { honchoCodec } from 'ledgerstore';

const ledger = await Ledger.open(memoryBackend({ codec: honchoCodec }));
const item = { type: 'turn', session: 'chat-1', turn: 3 } as const;
await ledger.append({ type: 'decided', time: '2026-09-28T10:00:00.000Z', item, action: { type: 'turn', workspace: 'trusted', speaker: 'kyle' } });
try {
  await ledger.append({ type: 'decided', time: '2026-09-28T10:00:00.000Z', item, action: { type: 'skip', why: 'again' } });
} catch (e) {
  if (isLedgerError(e, 'LEDGER_ALREADY_DECIDED')) console.log(e.message);
}
const counts: Counts = await ledger.counts();
console.log(JSON.stringify(counts));
await ledger.close();
`;

const LINE =
  '{"type":"decided","time":"2026-09-28T10:00:00.000Z","item":{"type":"turn","session":"chat-1","turn":3},"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}}\n';

/** What every install must give: the bin, the types, the shipped files. */
function checkInstalled(project: Consumer): void {
  const installed = join(project.dir, 'node_modules', 'ledgerstore');
  for (const file of [
    'LICENSE',
    'README.md',
    'CHANGELOG.md',
    'docs/runbook.md',
    'docs/format.md',
    'docs/spec/memoryd-honcho-ledger.md',
    'docs/charts/replay-rate.svg',
    'examples/generic-log.ts',
    'examples/memoryd-consumer.ts',
    'examples/turns-per-session.ts',
    'dist/lib/index.js',
    'dist/lib/index.d.ts',
    'dist/lib/cli.js',
    // read at run time by the PostgreSQL backend (versions.ts): the build copies it beside its module
    'dist/backends/postgres/sql/v1.sql',
  ]) {
    assert.ok(existsSync(join(installed, file)), `the package has ${file}`);
  }
  // every source map names a source that ships beside it
  const maps = readdirSync(join(installed, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.js.map'),
  );
  assert.ok(maps.length > 10, `source maps: ${maps.length}`);
  for (const map of maps) {
    const { sources } = JSON.parse(readFileSync(join(installed, 'dist', map), 'utf8')) as { sources: string[] };
    for (const source of sources)
      assert.ok(existsSync(join(installed, 'dist', map, '..', source)), `${map} names ${source}, which ships`);
  }

  // the bin, on a ledger of the user's
  writeFileSync(join(project.dir, 'honcho.jsonl'), LINE);
  const bin = join(project.dir, 'node_modules', '.bin', 'ledgerstore');
  assert.is(
    project.run(bin, ['counts', 'honcho.jsonl', '--json']).trim(),
    '{"decided":1,"sent":0,"waiting":1,"failed":0,"skipped":0}',
  );

  // a user's strict TypeScript against the package's types, then run; and a type error in their
  // code caught against the same types. One compile does both (tsc emits what type-checks), so
  // every error it reports must be wrong.ts's, and use.ts's output runs.
  writeFileSync(join(project.dir, 'use.ts'), USE);
  writeFileSync(
    join(project.dir, 'wrong.ts'),
    "import { Ledger } from 'ledgerstore';\nexport const n: number = Ledger.open;\n",
  );
  const errors = compileRefused(project).filter((line) => /error TS\d+/.test(line));
  assert.ok(errors.length > 0, 'the type error in wrong.ts is caught');
  for (const line of errors) assert.ok(line.startsWith('wrong.ts('), `only wrong.ts has an error: ${line}`);
  assert.is(
    project.run('node', ['out/use.js']),
    'turn 3 of session chat-1: decided already\n{"decided":1,"sent":0,"waiting":1,"failed":0,"skipped":0}\n',
  );
}

/** Runs the project's tsc, which must fail; gives the lines it wrote. */
function compileRefused(project: Consumer): string[] {
  try {
    project.run(TSC, ['-p', '.', '--pretty', 'false']);
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e).split('\n');
  }
  assert.unreachable('tsc accepted wrong.ts');
  return [];
}

/**
 * A backend of the user's own, in their project's folder, on the package's log base (an array of
 * the codec's lines), and its whole conformance run: one `suite(...)` call, with node:test.
 */
const THEIR_BACKEND = `import { test } from 'node:test';
import { type LogBackend, type LogCapabilities, type OpenOptions, type Position, type Record, type ResumePoint, StoredLog, honchoCodec } from 'ledgerstore';
import { suite } from 'ledgerstore/conformance';

const CAPABILITIES: LogCapabilities = { durable: false, files: false, severalWriters: false, readsWhileWriting: true, atomicBatches: true, watches: false };

class ArrayLog extends StoredLog<Record> {
  private constructor(private readonly lines: string[], readOnly: boolean) {
    super({ name: 'array:', capabilities: CAPABILITIES, codec: honchoCodec, readOnly, writerKey: lines });
  }
  static open(lines: string[], options: OpenOptions<Record>): Promise<ArrayLog> {
    return new ArrayLog(lines, options.readOnly ?? false).start(options);
  }
  private records(from: Position, to: Position): Record[][] {
    return [this.lines.slice(from, to).map((line) => honchoCodec.decode(Buffer.from(line), 0, Buffer.byteLength(line)))];
  }
  protected _entries(from: Position): Record[][] {
    return this.records(from, this.lines.length);
  }
  protected _storedBefore({ position }: ResumePoint): string | undefined {
    return this.lines[position - 1];
  }
  protected _storedLast(): string | undefined {
    return this.lines[this.head - 1];
  }
  protected _append(records: readonly Record[]): void {
    for (const record of records) this.lines.push(honchoCodec.encode(record));
  }
  protected *_read(from: Position): Generator<Record[]> {
    // a record a batch: the ledger reads a sent item's ids back by position, one record
    for (let position = from; position < this.head; position++) yield* this.records(position, position + 1);
  }
  protected _close(): void {}
}

function arrayBackend(): LogBackend<Record> {
  const lines: string[] = [];
  return { name: 'array:', capabilities: CAPABILITIES, open: (options = {}) => ArrayLog.open(lines, options) };
}

suite({ test, name: 'array', factory: () => ({ backend: arrayBackend(), cleanup: () => {} }) });
`;

const pack = suite('package');

/** The project that installs the tarball, made once for the tests that use it (an install is seconds of CPU). */
let packed: Consumer | null = null;
const packedProject = (): Consumer => {
  packed ??= consumer('pack');
  return packed;
};
pack.after(() => packed?.remove());

pack(
  'a backend in another project runs the whole conformance suite with one suite(...) call, shipped as ledgerstore/conformance',
  () => {
    const project = packedProject();
    writeFileSync(join(project.dir, 'theirs.ts'), THEIR_BACKEND);
    project.run(TSC, ['-p', '.']);
    const report = project.run('node', ['--test', '--test-reporter=tap', 'out/theirs.js']);
    const passed = Number(/^# pass (\d+)$/m.exec(report)?.[1]);
    assert.match(report, /^# fail 0$/m);
    assert.ok(passed >= 25, `${passed} tests passed`);
    assert.match(report, /^ok \d+ - array: the guards refuse in one order/m);
  },
);

pack('npm pack: a project that installs the tarball gets the bin, the types and the runbook', () => {
  checkInstalled(packedProject());
});

pack('a git URL: npm builds the package with prepare, and it works as the tarball does', () => {
  // HEAD of this checkout, as `npm install git+https://...` would fetch it
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const project = consumer(`git+file://${ROOT.replace(/\/$/, '')}#${head}`);
  try {
    assert.ok(
      existsSync(join(project.dir, 'node_modules', 'ledgerstore', 'dist', 'lib', 'cli.js')),
      'prepare built dist/',
    );
    checkInstalled(project);
  } finally {
    project.remove();
  }
});

/** The fenced blocks of `language` in the README's section `heading`, in order. */
function readmeBlocks(heading: string, language: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(start !== -1, `the README has a section "${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end === -1 ? readme.length : end);
  return [...text.matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1] ?? '');
}

pack("the README's four lines and tsconfig make a project that type-checks and runs it, examples too", () => {
  const [lines] = readmeBlocks('Adding it to a project', 'sh');
  const [tsconfig] = readmeBlocks('Adding it to a project', 'json');
  const [program] = readmeBlocks('Adding it to a project', 'ts');
  assert.ok(lines !== undefined && tsconfig !== undefined && program !== undefined, 'the sh, json and ts blocks');
  assert.is(lines.trim().split('\n').length, 4, `four lines:\n${lines}`);
  const options = (JSON.parse(tsconfig) as { compilerOptions: { [option: string]: unknown } }).compilerOptions;
  assert.equal([options.module, options.moduleResolution, options.types], ['NodeNext', 'NodeNext', ['node']]);

  // the checkout packed into ../ledgerstore, beside where the lines make the project, as the README says
  const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-readme-'));
  try {
    mkdirSync(join(dir, 'ledgerstore'));
    const built = statSync(join(ROOT, 'dist', 'lib', 'index.js')).mtimeMs;
    packInto(join(dir, 'ledgerstore'));
    // files running beside this one load dist/: packing must not build it again
    assert.is(statSync(join(ROOT, 'dist', 'lib', 'index.js')).mtimeMs, built, 'npm pack left dist/ as it was');
    const shell = (script: string, cwd: string): string => {
      try {
        return execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
          cwd,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 600_000,
          // the dependencies npm ci has just cached, as the other installs here take them
          env: {
            ...process.env,
            npm_config_prefer_offline: 'true',
            npm_config_audit: 'false',
            npm_config_fund: 'false',
          },
        });
      } catch (e) {
        const { stdout, stderr } = e as { stdout?: string; stderr?: string };
        throw new Error(`${script}\nfailed: ${String(e)}\n${stdout ?? ''}\n${stderr ?? ''}`);
      }
    };
    shell(lines, dir);
    const project = join(dir, 'my-project');
    writeFileSync(join(project, 'tsconfig.json'), tsconfig);
    writeFileSync(join(project, 'index.ts'), program);
    // an example from the package, as a user would copy it: it opens LevelDB, whose install script npm skipped
    copyFileSync(
      join(project, 'node_modules', 'ledgerstore', 'examples', 'generic-log.ts'),
      join(project, 'generic-log.ts'),
    );
    shell('npx tsc', project);
    assert.is(
      shell('node out/index.js', project),
      '{ decided: 1, sent: 0, waiting: 0, failed: 0, skipped: 1 }\n',
      'the README example, compiled and run',
    );
    shell('node out/generic-log.js', project);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

pack.run();
