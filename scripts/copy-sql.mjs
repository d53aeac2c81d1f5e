// The build's step after tsc: the PostgreSQL schema's .sql files, which the backend reads at run
// time next to its modules (backends/postgres/versions.ts), copied into dist/.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';

const from = new URL('../backends/postgres/sql/', import.meta.url);
const to = new URL('../dist/backends/postgres/sql/', import.meta.url);
mkdirSync(to, { recursive: true });
for (const file of readdirSync(from)) if (file.endsWith('.sql')) copyFileSync(new URL(file, from), new URL(file, to));
