/**
 * Test support: where PostgreSQL's server binaries (`initdb`, `pg_ctl`) are, for the throwaway
 * clusters the tests start (`pg-keeper.ts`, and the docs' own commands in
 * `docs-postgres-local.test.ts`). `scripts/pg-server.sh`, which installs them for `make test`,
 * looks in the same places.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The folders looked in: `pg_config --bindir`, then Debian's `/usr/lib/postgresql/<version>/bin`, newest first. */
export function binaryCandidates(): string[] {
  const candidates: string[] = [];
  try {
    candidates.push(
      execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    );
  } catch {
    // no pg_config: look where Debian puts the server
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  return candidates;
}

/** The first of `candidates` that holds both `initdb` and `pg_ctl`, or undefined. */
export function serverBinaries(candidates: readonly string[] = binaryCandidates()): string | undefined {
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}
