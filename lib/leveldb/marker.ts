/**
 * The marker file, `LEDGERSTORE`: one line of JSON saying what a LevelDB folder of ledgerstore's
 * holds (`format`: `ledgerstore/level` or `ledgerstore/read-model`) and what its owner keeps
 * there, then the CRC-32C of that line in hex. LevelDB leaves a file of that name alone (it is
 * not one of its names). Here it is read, and its text made; it is written (synced, by rename)
 * by `lib/database-folder.ts`, since nothing under `lib/leveldb/` writes.
 *
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LedgerIoError } from '../errors.js';
import { crc32c } from './crc32c.js';

/** The CRC-32C of a marker's line, as the file holds it: 8 hex digits. */
const checkOf = (line: string): string => crc32c(Buffer.from(line, 'utf8')).toString(16).padStart(8, '0');

/** The name of the marker file. */
export const MARKER = 'LEDGERSTORE';
/** A marker being written: `LEDGERSTORE.tmp-<pid>`, one per process, so that two creators never share one. */
const MARKER_TEMPORARY = /^LEDGERSTORE\.tmp-\d+$/;

/** What a marker says a folder holds: its `format` field. */
export type FolderFormat = 'ledgerstore/level' | 'ledgerstore/read-model';

/** The marker's fields: `format`, and whatever its owner keeps there (JSON). */
export interface Marker {
  readonly format: FolderFormat;
  readonly [field: string]: unknown;
}

/**
 * The fields of the marker file in `folder`, why it is not one (damaged), or `null` when there is
 * none.
 * @throws {@link LedgerIoError} when it cannot be read
 */
export function markerOf(folder: string): Marker | string | null {
  const file = path.join(folder, MARKER);
  try {
    return readMarker(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LedgerIoError(file, e);
  }
}

/** Whether `name` is one of the marker's temporary files (`LEDGERSTORE.tmp-<pid>`). */
export const isMarkerTemporary = (name: string): boolean => MARKER_TEMPORARY.test(name);

/** The fields of a marker file, or why it is not one. */
export function readMarker(file: string): Marker | string {
  const text = fs.readFileSync(file, 'utf8');
  const [line = '', check = '', ...rest] = text.split('\n');
  if (rest.join('') !== '' || !/^[0-9a-f]{8}$/.test(check))
    return 'the marker file is not two lines, its fields and their checksum';
  if (checkOf(line) !== check) return 'the marker file does not match its checksum';
  let fields: unknown;
  try {
    fields = JSON.parse(line);
  } catch {
    return 'the marker file is not JSON';
  }
  const format = (fields as { format?: unknown } | null)?.format;
  if (format !== 'ledgerstore/level' && format !== 'ledgerstore/read-model')
    return `the marker file names no format ledgerstore writes (${JSON.stringify(format)})`;
  return fields as Marker;
}

/** The text of a marker file holding `marker`: its line of JSON, then that line's CRC-32C in hex. */
export function markerText(marker: Marker): string {
  const line = JSON.stringify(marker);
  return `${line}\n${checkOf(line)}\n`;
}
