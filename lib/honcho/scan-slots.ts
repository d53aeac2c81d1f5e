/**
 * The layout of a scan's output, which both scans of a record's canonical bytes write (a JSON
 * line's, `scan.ts`; a LevelDB value's CBOR, `cbor-scan.ts`) and one reader takes
 * (`canonical.ts`, and the state's `Projection.replayLine`).
 *
 * ## What a scan gives
 *
 * An `Int32Array`, line after line:
 *
 * | slot | what |
 * |---|---|
 * | 0 | the header: the kind (bits 0-1: 0 for the serde way, 1 `decided`, 2 `sent`, 3 `failed`), an edit item (bit 2), the action (bits 3-5, in `ACTION_VARIANTS`' order), the workspace (bits 6-7, in `WORKSPACES`' order), a turn given as digits (bit 8) |
 * | 1 | where the line's newline is |
 * | 2 | where the time starts (24 bytes) |
 * | 3, 4 | the item's session or id: a string (below) |
 * | 5, 6 | the turn or part: its high and low 32 bits; for a turn given as digits, where they start and how many |
 * | then | `decided`: the action's strings in canonical order; `sent`: the number of ids, then each id; `failed`: the status (-1 for `null`), then the kind |
 *
 * A string is two slots: where its text starts (after the quote), then its length in bytes times
 * 4 plus how it is written: 0 ASCII with no escape, 1 UTF-8 with no escape, 2 with escapes. A line
 * for the serde way has only its first two slots.
 *
 * Positions are indexes into the bytes scanned.
 *
 * @module
 */

/** The kinds of a line, in a header's bits 0-1. */
export const SERDE = 0;
export const DECIDED = 1;
export const SENT = 2;
export const FAILED = 3;
/** A header bit: the item is an edit (else a turn). */
export const EDIT_ITEM = 4;
/** A header bit: the turn is given as its digits (more than 15 of them). */
export const TURN_DIGITS = 256;
/** How a string is written, in the low 2 bits of its second slot. */
export const ASCII = 0;
export const UTF8 = 1;
export const ESCAPED = 2;
