/**
 * The fingerprint a resume point carries (`ResumePoint.fingerprint`, lib/log.ts): SHA-256, in
 * hex, of the record as the backend stores it (a JSONL line without its newline, a LevelDB
 * value, a record's canonical text). One function, so that every backend fingerprints alike.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** SHA-256 (hex) of a stored record's bytes or text. */
export function fingerprintOf(stored: Uint8Array | string): string {
  return createHash('sha256').update(stored).digest('hex');
}
