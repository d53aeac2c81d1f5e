/**
 * The keeper of the PostgreSQL server that a test run uses: a child process of the run
 * (`pg-cluster.ts` starts it), which makes what the tests need, says where it is on one line of
 * JSON on stdout, and removes it again when its stdin closes, that is when the run ends, however
 * it ends (a test process killed with SIGKILL closes the pipe too).
 *
 *     node pg-keeper.js cluster                 a throwaway cluster: {"host", "port", "user", "database"}
 *     node pg-keeper.js schema <url> <schema>   a user's server (LEDGERSTORE_PG_URL): {} once <schema> is dropped, dropped again at the end
 *
 * A line `restart` on its stdin restarts the server (`pg_ctl restart -m fast`: every session is
 * ended, the server is down for a moment, then back with the same settings), and it says
 * `{"restarted":true}` once the server takes connections again. On a user's server, which is
 * not the keeper's to restart, it ends every ledgerstore session of the database instead
 * (`pg_terminate_backend`), which is what a restart is to a client.
 *
 * The throwaway cluster: `initdb` into a fresh temporary folder (mode 0700), or a copy of the
 * cluster the run's first keeper made that way, which the others wait for (`run-folder.ts`): a
 * copy costs a tenth of `initdb`'s second of CPU, a server listening
 * on a Unix socket in that folder only (no TCP), with `fsync`, `synchronous_commit` and
 * `full_page_writes` on, so that durability is tested as it is in production. The user the
 * tests connect as, `ledgerstore`, is the superuser and is let in without a password; every
 * other role must give its password (scram), so that a wrong one is refused. `initdb` and
 * `postgres` refuse to run as root: as root, they run as the `postgres` user (`runuser`), and
 * the folder is handed to it. Never a system cluster: nothing outside the folder is touched.
 *
 * Where the server's binaries are missing, it says how to install them, on one line of JSON
 * (`{"error": ...}`), and exits 2.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { binaryCandidates, serverBinaries } from './pg-binaries.js';
import { madeOncePerRun } from './run-folder.js';

/** The name of the socket file, `.s.PGSQL.<port>`: no TCP port is opened. */
const PORT = 5432;
const SUPERUSER = 'ledgerstore';
const AS_ROOT_USER = 'postgres';

const say = (what: unknown): void => {
  process.stdout.write(`${JSON.stringify(what)}\n`);
};

class Refusal extends Error {}

/** The folder of `initdb` and `pg_ctl` (`pg-binaries.ts`). */
function binaries(): string {
  const candidates = binaryCandidates();
  const found = serverBinaries(candidates);
  if (found === undefined) {
    throw new Refusal(
      `PostgreSQL's server binaries (initdb, pg_ctl) are not installed: looked in ${candidates.length === 0 ? '`pg_config --bindir` (no pg_config)' : candidates.join(', ')} and /usr/lib/postgresql/*/bin. ` +
        'Install them (Debian or Ubuntu: apt-get install postgresql; `make test` does so when it runs as root, scripts/pg-server.sh), or point LEDGERSTORE_PG_URL at a server of yours (postgres://user@host/db)',
    );
  }
  return found;
}

/** Runs a server binary, as the `postgres` user when this process is root. */
function run(bin: string, args: readonly string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', AS_ROOT_USER, '--', bin, ...args]] : [bin, args];
  execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function ownerFor(dir: string): void {
  if (process.getuid?.() !== 0) return;
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', AS_ROOT_USER], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', AS_ROOT_USER], { encoding: 'utf8' }).trim());
  } catch {
    throw new Refusal(
      `running as root, the server must run as the user ${AS_ROOT_USER}, which does not exist; install PostgreSQL's package (it makes the user) or run the tests as another user`,
    );
  }
  chownSync(dir, uid, gid);
}

/** Waits until the process `pid` is gone or a zombie (PID 1 may reap it late). */
async function gone(pid: number): Promise<void> {
  for (let n = 0; n < 600; n++) {
    let state = '';
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .slice(0, 1);
    } catch {
      return;
    }
    if (state === 'Z' || state === 'X') return;
    await sleep(50);
  }
}

/** What the keeper keeps: how to restart the server, and how to remove what it made. */
interface Kept {
  readonly restart: () => Promise<void>;
  readonly stop: () => Promise<void>;
}

async function cluster(): Promise<Kept> {
  const bin = binaries();
  // short: a socket's path must stay under 108 bytes
  const dir = mkdtempSync(join(tmpdir(), 'lst-pg-'));
  const data = join(dir, 'data');
  const stop = async (): Promise<void> => {
    const pidFile = join(data, 'postmaster.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : NaN;
    try {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
    } catch {
      // not running (it failed to start, or stopped already)
    }
    if (Number.isSafeInteger(pid)) await gone(pid);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    ownerFor(dir);
    const step = (what: string, bin: string, args: readonly string[], asServer = true): void => {
      try {
        if (asServer) run(bin, args);
        else execFileSync(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (e) {
        const log = [join(dir, 'server.log')]
          .filter(existsSync)
          .map((f) => readFileSync(f, 'utf8'))
          .join('');
        throw new Refusal(`${what} failed: ${String((e as { stderr?: unknown }).stderr ?? e)}${log}`);
      }
    };
    const initdb = (): void =>
      step('initdb', join(bin, 'initdb'), [
        '-D',
        data,
        '-U',
        SUPERUSER,
        '-A',
        'trust',
        '-E',
        'UTF8',
        '--no-locale',
        '--no-sync',
      ]);
    // the run's first fresh cluster, kept before its server first starts (as root, `cp -a` keeps its owner)
    const shared = madeOncePerRun('pg-cluster', (folder) => {
      initdb();
      execFileSync('cp', ['-a', data, join(folder, 'cluster')]);
    });
    if (shared !== null && !existsSync(data))
      step("copying the run's cluster", 'cp', ['-a', join(shared, 'cluster'), data], false);
    else if (!existsSync(data)) initdb();
    // the tests' superuser without a password; any other role with one
    const hba = join(data, 'pg_hba.conf');
    writeFileSync(hba, `local all ${SUPERUSER} trust\nlocal all all scram-sha-256\n`);
    step('starting the server', join(bin, 'pg_ctl'), serverArgs('start'));
  } catch (e) {
    await stop();
    throw e;
  }
  say({ host: dir, port: PORT, user: SUPERUSER, database: 'postgres' });
  return {
    restart: async () => run(join(bin, 'pg_ctl'), [...serverArgs('restart').slice(0, -1), '-m', 'fast', 'restart']),
    stop,
  };

  function serverArgs(action: 'start' | 'restart'): string[] {
    const settings = `-k ${dir} -p ${PORT} -c listen_addresses='' -c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=200`;
    return ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', settings, action];
  }
}

async function schema(url: string, name: string): Promise<Kept> {
  const session = async (body: (client: pg.Client) => Promise<unknown>): Promise<void> => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await body(client);
    } finally {
      await client.end();
    }
  };
  const drop = (): Promise<void> => session((client) => client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`));
  await drop(); // one left by an earlier run of the same pid
  say({});
  const restart = (): Promise<void> =>
    session((client) =>
      client.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'ledgerstore-%'",
      ),
    );
  return { restart, stop: drop };
}

const [mode, ...args] = process.argv.slice(2);
let kept: Kept;
try {
  if (mode === 'cluster') kept = await cluster();
  else if (mode === 'schema' && args[0] !== undefined && args[1] !== undefined) kept = await schema(args[0], args[1]);
  else throw new Refusal('usage: pg-keeper.js cluster | schema <url> <schema>');
} catch (e) {
  say({ error: e instanceof Error ? e.message : String(e) });
  process.exit(2);
}
const stop = kept.stop;

/** Whether the keeper is stopping: a second signal waits for the first's cleanup. */
let stopping = false;
const end = (): void => {
  if (stopping) return;
  stopping = true;
  void stop().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`pg-keeper: could not clean up: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
};
process.stdin.on('end', end);
process.stdin.on('error', end);
let asked = '';
process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
  asked += chunk;
  for (let newline = asked.indexOf('\n'); newline !== -1; newline = asked.indexOf('\n')) {
    const request = asked.slice(0, newline);
    asked = asked.slice(newline + 1);
    if (request !== 'restart') continue;
    kept.restart().then(
      () => say({ restarted: true }),
      (e: unknown) => say({ error: `restarting the server: ${e instanceof Error ? e.message : String(e)}` }),
    );
  }
});
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, end);
