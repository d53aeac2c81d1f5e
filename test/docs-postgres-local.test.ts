/**
 * docs/postgres.md's "Trying it locally" works as written: its first ```` ```sh ```` block, the
 * commands that take a newcomer from no cluster to a ledger copied into PostgreSQL and followed,
 * runs for real in a fresh temporary folder, with the server's binaries on PATH (found as the
 * test clusters find them) and `ledgerstore` the checkout's built CLI. As root it runs as the
 * `postgres` user, as the section tells a root reader to. It must copy, print the copied records
 * through `follow`, and stop and remove its cluster; the section's URIs hold no password.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from './support/packed.js';
import { serverBinaries } from './support/pg-binaries.js';

const PAGE = join(ROOT, 'docs', 'postgres.md');
const HEADING = '## Trying it locally';

/** The section's text, from its heading to the next `## `. */
function section(): string {
  const text = readFileSync(PAGE, 'utf8');
  const start = text.indexOf(`\n${HEADING}\n`);
  assert.ok(start !== -1, `docs/postgres.md has a section "${HEADING}"`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start + 1, end === -1 ? text.length : end + 1);
}

/** The first ```sh block of `text`. */
function firstShellBlock(text: string): string {
  const found = /^```sh\n([\s\S]*?)^```$/m.exec(text);
  assert.ok(found !== null, `"${HEADING}" has a \`\`\`sh block`);
  return found?.[1] ?? '';
}

const asRoot = process.getuid?.() === 0;

/** Runs `file` as this process's user, or as `postgres` when root; gives stdout. */
function runAs(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const [command, argv] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), file, ...args]]
    : [file, args];
  try {
    return execFileSync(command, [...argv], {
      cwd,
      env: asRoot ? { PATH: process.env.PATH } : env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000, // a server that never starts, or a follow that never ends, fails the test
    });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(' ')} failed: ${String(e)}\nstdout:\n${stdout ?? ''}\nstderr:\n${stderr ?? ''}`,
    );
  }
}

test('the section names no password in a URI, and its commands run from initdb to copy and follow', () => {
  const text = section();
  for (const uri of text.match(/postgres(?:ql)?:\/\/[^\s`"')]*/g) ?? []) {
    assert.not.match(uri, /password=/, `${uri}: a password in a URI`);
    assert.not.match(uri, /:\/\/[^/@]*:[^/@]*@/, `${uri}: a password in a URI`);
  }
  const block = firstShellBlock(text);
  for (const step of ['initdb ', 'pg_ctl ', 'ledgerstore copy ', 'ledgerstore follow ', ' stop'])
    assert.ok(block.includes(step), `the block runs ${step.trim()}`);

  const bin = serverBinaries();
  assert.ok(
    bin !== undefined,
    "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: make test installs them as root (scripts/pg-server.sh)",
  );
  // short: the cluster's socket goes in <dir>/pg, and its path must stay under 108 bytes
  const dir = mkdtempSync(join(tmpdir(), 'lst-doc-'));
  const work = join(dir, 'work');
  try {
    mkdirSync(work);
    const tools = join(dir, 'bin');
    mkdirSync(tools);
    symlinkSync(join(ROOT, 'dist', 'lib', 'cli.js'), join(tools, 'ledgerstore'));
    writeFileSync(join(dir, 'block.sh'), block);
    chmodSync(dir, 0o755);
    if (asRoot) execFileSync('chown', ['-R', 'postgres:', work]);
    // only what the reader's shell would have: no PG* variable of this process's
    const env = { PATH: [tools, bin, dirname(process.execPath), '/usr/bin', '/bin'].join(':'), HOME: work };
    const out = runAs('bash', ['-euo', 'pipefail', join(dir, 'block.sh')], work, env);

    assert.match(out, /: copied 10000 records from honcho\.jsonl in [\d.]+ s, and read it back: /);
    const copied = readFileSync(join(work, 'honcho.jsonl'), 'utf8').split('\n').slice(0, 5);
    const followed = out.split('\n').filter((line) => /^\d+ {2}\S/.test(line));
    assert.is(followed.length, 5, `follow printed five records:\n${out}`);
    followed.forEach((line, n) => {
      const record = JSON.parse(copied[n] ?? '{}') as { type: string };
      assert.ok(line.startsWith(`${n}  ${record.type} `), `record ${n} is the copied one: ${line}`);
    });
    assert.not.ok(existsSync(join(work, 'pg')), 'the block removed its cluster');
  } finally {
    const data = join(work, 'pg', 'data');
    if (bin !== undefined && existsSync(join(data, 'postmaster.pid'))) {
      try {
        runAs(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], work, { PATH: '/usr/bin:/bin' });
      } catch {
        // it stopped meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
