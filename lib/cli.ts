#!/usr/bin/env node
/**
 * The `ledgerstore` bin (package.json's `bin`): runs the command line (`cli/main.ts`) with this
 * process's arguments, streams and signals, and exits with its status.
 *
 * @module
 */
import { main } from './cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  stderrIsTTY: process.stderr.isTTY === true,
  stderrColumns: process.stderr.columns,
  signals: process,
});
