/**
 * Reads JSON bytes the way serde_json's `from_slice` does, so that a ledger line is accepted or
 * refused exactly as memoryd accepts or refuses it, with serde_json's own error texts.
 *
 * Why not `JSON.parse`: it takes the last of duplicate keys, accepts lone surrogate escapes,
 * cannot tell `3.0` from `3`, and works on text, so a file's invalid UTF-8 would already have
 * been replaced. serde_json refuses all of these.
 *
 * What it mirrors (serde_json 1.x `de.rs` and `read.rs`, serde's `private/de.rs`):
 * - the grammar of RFC 8259, bytes in, whitespace ` \t\n\r`, a depth limit of 128;
 * - numbers as serde_json classes them: a non-negative integer that fits a u64 (`u`), a negative
 *   one that fits an i64 (`i`), anything else a float (`f`), `-0` included;
 * - strings: control characters refused, escapes checked, surrogate escapes paired, UTF-8 checked;
 * - the error texts and their positions: `<what> at line <l> column <c>`, the column counted in
 *   bytes; errors found while mapping buffered content onto a type have no position, as in serde.
 * - internally tagged enums (`#[serde(tag = "type")]`): their content is buffered ({@link Content})
 *   while the tag is looked for, in a map or as the first element of a sequence, and the tag's
 *   errors (unknown variant, duplicate or missing tag) are raised as they are met.
 *
 * Longer than most files, and earned: one concern, a port of serde_json's reader and its words.
 *
 * @module
 */
import { isUtf8 } from 'node:buffer';
import { DecodeError } from './errors.js';

/** A number as serde_json reads it. */
export class JsonNumber {
  /**
   * @param kind `u`: a non-negative integer that fits a u64; `i`: a negative integer that fits an
   *   i64; `f`: anything else (a fraction, an exponent, `-0`, an integer out of range)
   * @param value the number (exact for integers up to 2^53)
   * @param digits for `u` and `i`, the integer's decimal digits without sign
   */
  constructor(
    readonly kind: 'u' | 'i' | 'f',
    readonly value: number,
    readonly digits: string,
  ) {}
}

/** A JSON object as buffered content: its entries in order, duplicates kept. */
export class ContentMap {
  readonly keys: string[] = [];
  readonly values: Content[] = [];
}

/** Buffered JSON content (serde's `Content`): `null` is JSON's `null`. */
export type Content = null | boolean | string | JsonNumber | Content[] | ContentMap;

/** An internally tagged enum's tag and the rest of its content. */
export interface Tagged {
  /** The variant's index in the `variants` given. */
  readonly variant: number;
  /** The other entries (from a map) or the other elements (from a sequence). */
  readonly content: ContentMap | Content[];
}

const enum Code {
  EofWhileParsingList = 'EOF while parsing a list',
  EofWhileParsingObject = 'EOF while parsing an object',
  EofWhileParsingString = 'EOF while parsing a string',
  EofWhileParsingValue = 'EOF while parsing a value',
  ExpectedColon = 'expected `:`',
  ExpectedListCommaOrEnd = 'expected `,` or `]`',
  ExpectedObjectCommaOrEnd = 'expected `,` or `}`',
  ExpectedSomeIdent = 'expected ident',
  ExpectedSomeValue = 'expected value',
  InvalidEscape = 'invalid escape',
  InvalidNumber = 'invalid number',
  NumberOutOfRange = 'number out of range',
  InvalidUnicodeCodePoint = 'invalid unicode code point',
  ControlCharacterWhileParsingString = 'control character (\\u0000-\\u001F) found while parsing a string',
  KeyMustBeAString = 'key must be a string',
  LoneLeadingSurrogateInHexEscape = 'lone leading surrogate in hex escape',
  TrailingComma = 'trailing comma',
  TrailingCharacters = 'trailing characters',
  UnexpectedEndOfHexEscape = 'unexpected end of hex escape',
  RecursionLimitExceeded = 'recursion limit exceeded',
}

/** An error without a position yet (serde's `de::Error::custom`); serde_json may give it one. */
class Unpositioned extends Error {}

const U64_MAX = 18446744073709551615n;
const I64_MIN_MAGNITUDE = 9223372036854775808n;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/**
 * One JSON text in `bytes[start, end)`. Read it with {@link readAny} or {@link readTagged}, map
 * the content, then call {@link end} (serde_json checks trailing characters last).
 */
export class SerdeJsonReader {
  private readonly buf: Buffer;
  private i: number;
  private remainingDepth = 128;

  constructor(
    bytes: Uint8Array,
    private readonly start = 0,
    private readonly stop = bytes.length,
  ) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.i = start;
  }

  /** Any JSON value, buffered. */
  readAny(): Content {
    try {
      return this.parseValue();
    } catch (e) {
      throw this.decodeError(e);
    }
  }

  /**
   * An internally tagged enum's tag and content, as serde's `TaggedContentVisitor` reads them
   * from serde_json: the tag's errors are raised where they are met and carry a position.
   * @param tagName the tag's key (`type`)
   * @param variants the variants' names, in declaration order
   * @param expecting what the enum is called in errors (`internally tagged enum Record`)
   */
  readTagged(tagName: string, variants: readonly string[], expecting: string): Tagged {
    try {
      return this.parseTagged(tagName, variants, expecting);
    } catch (e) {
      throw this.decodeError(e);
    }
  }

  /** Refuses anything but whitespace after the value (serde_json's `Deserializer::end`). */
  end(): void {
    if (this.skipWhitespace() !== -1) throw this.decodeError(this.peekError(Code.TrailingCharacters));
  }

  // -- errors ---------------------------------------------------------------------------------

  private decodeError(e: unknown): DecodeError {
    if (e instanceof DecodeError) return e;
    if (e instanceof Unpositioned) return new DecodeError(e.message);
    throw e;
  }

  private positioned(code: string, index: number): DecodeError {
    let lineStart = this.start;
    let line = 1;
    for (let j = this.start; j < index; j++) {
      if (this.buf[j] === 0x0a) {
        line++;
        lineStart = j + 1;
      }
    }
    return new DecodeError(`${code} at line ${line} column ${index - lineStart}`);
  }

  /** An error at the byte last consumed (serde_json's `error`). */
  private error(code: string): DecodeError {
    return this.positioned(code, this.i);
  }

  /** An error at the byte peeked at (serde_json's `peek_error`). */
  private peekError(code: string): DecodeError {
    return this.positioned(code, Math.min(this.stop, this.i + 1));
  }

  /** Gives an unpositioned error the current position (serde_json's `fix_position`). */
  private fixPosition(e: unknown): unknown {
    return e instanceof Unpositioned ? this.error(e.message) : e;
  }

  // -- bytes ----------------------------------------------------------------------------------

  /** The next byte, or -1 at the end. */
  private peek(): number {
    return this.i < this.stop ? (this.buf[this.i] as number) : -1;
  }

  private skipWhitespace(): number {
    for (;;) {
      const c = this.peek();
      if (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) this.i++;
      else return c;
    }
  }

  // -- values ---------------------------------------------------------------------------------

  private parseValue(): Content {
    const c = this.skipWhitespace();
    try {
      switch (c) {
        case -1:
          throw this.peekError(Code.EofWhileParsingValue);
        case 0x6e: // n
          this.i++;
          this.parseIdent('ull');
          return null;
        case 0x74: // t
          this.i++;
          this.parseIdent('rue');
          return true;
        case 0x66: // f
          this.i++;
          this.parseIdent('alse');
          return false;
        case 0x2d: // -
          this.i++;
          return this.parseNumber(false);
        case 0x22: // "
          this.i++;
          return this.parseString();
        case 0x5b: // [
          return this.nested(() => {
            const items: Content[] = [];
            let first = true;
            while (this.hasNextElement(first)) {
              first = false;
              items.push(this.parseValue());
            }
            return items;
          }, 0x5d);
        case 0x7b: // {
          return this.nested(() => {
            const map = new ContentMap();
            let first = true;
            while (this.hasNextKey(first)) {
              first = false;
              this.i++;
              map.keys.push(this.parseString());
              this.parseColon();
              map.values.push(this.parseValue());
            }
            return map;
          }, 0x7d);
        default:
          if (isDigit(c)) return this.parseNumber(true);
          throw this.peekError(Code.ExpectedSomeValue);
      }
    } catch (e) {
      throw this.fixPosition(e);
    }
  }

  /**
   * `[` or `{` at the current byte: checks the depth limit, reads the inside with `body`, then
   * the closing byte. As in serde_json, the closing byte is read even when `body` failed, and the
   * body's error wins.
   */
  private nested<T>(body: () => T, close: number): T {
    if (--this.remainingDepth === 0) throw this.peekError(Code.RecursionLimitExceeded);
    this.i++;
    let result: T;
    try {
      result = body();
    } catch (e) {
      this.remainingDepth++;
      try {
        this.endNested(close);
      } catch {
        // the body's error is the one reported
      }
      throw e;
    }
    this.remainingDepth++;
    this.endNested(close);
    return result;
  }

  private endNested(close: number): void {
    const c = this.skipWhitespace();
    if (c === close) {
      this.i++;
      return;
    }
    if (close === 0x5d) {
      if (c === 0x2c) {
        this.i++;
        throw this.peekError(this.skipWhitespace() === 0x5d ? Code.TrailingComma : Code.TrailingCharacters);
      }
      throw this.peekError(c === -1 ? Code.EofWhileParsingList : Code.TrailingCharacters);
    }
    if (c === 0x2c) throw this.peekError(Code.TrailingComma);
    throw this.peekError(c === -1 ? Code.EofWhileParsingObject : Code.TrailingCharacters);
  }

  private hasNextElement(first: boolean): boolean {
    const c = this.skipWhitespace();
    if (c === -1) throw this.peekError(Code.EofWhileParsingList);
    if (c === 0x5d) return false;
    if (first) return true;
    if (c !== 0x2c) throw this.peekError(Code.ExpectedListCommaOrEnd);
    this.i++;
    const d = this.skipWhitespace();
    if (d === 0x5d) throw this.peekError(Code.TrailingComma);
    if (d === -1) throw this.peekError(Code.EofWhileParsingValue);
    return true;
  }

  /** Whether a key follows; leaves the index at its opening quote. */
  private hasNextKey(first: boolean): boolean {
    const c = this.skipWhitespace();
    if (c === -1) throw this.peekError(Code.EofWhileParsingObject);
    if (c === 0x7d) return false;
    if (first) {
      if (c !== 0x22) throw this.peekError(Code.KeyMustBeAString);
      return true;
    }
    if (c !== 0x2c) throw this.peekError(Code.ExpectedObjectCommaOrEnd);
    this.i++;
    const d = this.skipWhitespace();
    if (d === 0x22) return true;
    if (d === 0x7d) throw this.peekError(Code.TrailingComma);
    if (d === -1) throw this.peekError(Code.EofWhileParsingValue);
    throw this.peekError(Code.KeyMustBeAString);
  }

  private parseColon(): void {
    const c = this.skipWhitespace();
    if (c === 0x3a) {
      this.i++;
      return;
    }
    throw this.peekError(c === -1 ? Code.EofWhileParsingObject : Code.ExpectedColon);
  }

  private parseIdent(rest: string): void {
    for (let k = 0; k < rest.length; k++) {
      if (this.i >= this.stop) throw this.error(Code.EofWhileParsingValue);
      const c = this.buf[this.i++];
      if (c !== rest.charCodeAt(k)) throw this.error(Code.ExpectedSomeIdent);
    }
  }

  // -- numbers --------------------------------------------------------------------------------

  /** A number, after its sign: serde_json's `parse_integer` and what follows it. */
  private parseNumber(positive: boolean): JsonNumber {
    const numberStart = positive ? this.i : this.i - 1;
    if (this.i >= this.stop) throw this.error(Code.EofWhileParsingValue);
    const first = this.buf[this.i++] as number;
    const digitsStart = this.i - 1;
    if (first === 0x30) {
      if (isDigit(this.peek())) throw this.peekError(Code.InvalidNumber);
    } else if (first >= 0x31 && first <= 0x39) {
      while (isDigit(this.peek())) this.i++;
    } else {
      throw this.error(Code.InvalidNumber);
    }
    const integerEnd = this.i;
    let isFloat = false;
    const c = this.peek();
    if (c === 0x2e) {
      isFloat = true;
      this.i++;
      const fractionStart = this.i;
      while (isDigit(this.peek())) this.i++;
      if (this.i === fractionStart) {
        throw this.peekError(this.peek() === -1 ? Code.EofWhileParsingValue : Code.InvalidNumber);
      }
      const e = this.peek();
      if (e === 0x65 || e === 0x45) this.parseExponent();
    } else if (c === 0x65 || c === 0x45) {
      isFloat = true;
      this.parseExponent();
    }
    const text = this.buf.toString('latin1', numberStart, this.i);
    if (isFloat) return this.float(text);
    const digits = this.buf.toString('latin1', digitsStart, integerEnd);
    const value = Number(text);
    if (digits.length < 16) {
      if (positive) return new JsonNumber('u', value, digits);
      return value === 0 ? new JsonNumber('f', -0, '') : new JsonNumber('i', value, digits);
    }
    const magnitude = BigInt(digits);
    if (positive) return magnitude <= U64_MAX ? new JsonNumber('u', value, digits) : new JsonNumber('f', value, '');
    return magnitude <= I64_MIN_MAGNITUDE ? new JsonNumber('i', value, digits) : new JsonNumber('f', value, '');
  }

  private parseExponent(): void {
    this.i++;
    const sign = this.peek();
    if (sign === 0x2b || sign === 0x2d) this.i++;
    if (this.i >= this.stop) throw this.error(Code.EofWhileParsingValue);
    if (!isDigit(this.buf[this.i++] as number)) throw this.error(Code.InvalidNumber);
    while (isDigit(this.peek())) this.i++;
  }

  private float(text: string): JsonNumber {
    const value = Number(text);
    if (!Number.isFinite(value)) throw this.error(Code.NumberOutOfRange);
    return new JsonNumber('f', value, '');
  }

  // -- strings --------------------------------------------------------------------------------

  /** A string, after its opening quote: serde_json's `parse_str`. */
  private parseString(): string {
    const buf = this.buf;
    let segmentStart = this.i;
    let ascii = true;
    let validUtf8 = true;
    let out: string | null = null;
    for (;;) {
      const i = this.i;
      if (i >= this.stop) throw this.error(Code.EofWhileParsingString);
      const c = buf[i] as number;
      if (c === 0x22) {
        const tail = this.segment(segmentStart, i, ascii);
        if (tail === null) validUtf8 = false;
        this.i = i + 1;
        if (!validUtf8) throw this.error(Code.InvalidUnicodeCodePoint);
        return out === null ? (tail as string) : out + (tail as string);
      }
      if (c === 0x5c) {
        const piece = this.segment(segmentStart, i, ascii);
        if (piece === null) validUtf8 = false;
        out = (out ?? '') + (piece ?? '');
        this.i = i + 1;
        out += this.parseEscape();
        segmentStart = this.i;
        ascii = true;
        continue;
      }
      if (c < 0x20) {
        this.i = i + 1;
        throw this.error(Code.ControlCharacterWhileParsingString);
      }
      if (c >= 0x80) ascii = false;
      this.i = i + 1;
    }
  }

  /** The raw bytes `[from, to)` of a string as text, or `null` when they are not UTF-8. */
  private segment(from: number, to: number, ascii: boolean): string | null {
    if (ascii) return this.buf.toString('latin1', from, to);
    if (!isUtf8(this.buf.subarray(from, to))) return null;
    return this.buf.toString('utf8', from, to);
  }

  /** One escape, after its backslash. */
  private parseEscape(): string {
    if (this.i >= this.stop) throw this.error(Code.EofWhileParsingString);
    const c = this.buf[this.i++];
    switch (c) {
      case 0x22:
        return '"';
      case 0x5c:
        return '\\';
      case 0x2f:
        return '/';
      case 0x62:
        return '\b';
      case 0x66:
        return '\f';
      case 0x6e:
        return '\n';
      case 0x72:
        return '\r';
      case 0x74:
        return '\t';
      case 0x75:
        return this.parseUnicodeEscape();
      default:
        throw this.error(Code.InvalidEscape);
    }
  }

  /** `\uXXXX`, after the `u`; a surrogate must be followed by its pair. */
  private parseUnicodeEscape(): string {
    const n = this.hexEscape();
    if (n >= 0xdc00 && n <= 0xdfff) throw this.error(Code.LoneLeadingSurrogateInHexEscape);
    if (n < 0xd800 || n > 0xdbff) return String.fromCharCode(n);
    if (this.i >= this.stop) throw this.error(Code.EofWhileParsingString);
    if (this.buf[this.i] !== 0x5c) {
      this.i++;
      throw this.error(Code.UnexpectedEndOfHexEscape);
    }
    this.i++;
    if (this.i >= this.stop) throw this.error(Code.EofWhileParsingString);
    if (this.buf[this.i] !== 0x75) {
      this.i++;
      throw this.error(Code.UnexpectedEndOfHexEscape);
    }
    this.i++;
    const n2 = this.hexEscape();
    if (n2 < 0xdc00 || n2 > 0xdfff) throw this.error(Code.LoneLeadingSurrogateInHexEscape);
    return String.fromCharCode(n, n2);
  }

  private hexEscape(): number {
    if (this.stop - this.i < 4) {
      this.i = this.stop;
      throw this.error(Code.EofWhileParsingString);
    }
    let n = 0;
    let bad = false;
    for (let k = 0; k < 4; k++) {
      const h = hexValue(this.buf[this.i + k] as number);
      if (h < 0) bad = true;
      n = n * 16 + h;
    }
    this.i += 4;
    if (bad) throw this.error(Code.InvalidEscape);
    return n;
  }

  // -- internally tagged enums ----------------------------------------------------------------

  private parseTagged(tagName: string, variants: readonly string[], expecting: string): Tagged {
    const c = this.skipWhitespace();
    if (c === 0x7b) return this.nestedTagged(() => this.taggedMap(tagName, variants), 0x7d);
    if (c === 0x5b) return this.nestedTagged(() => this.taggedSeq(tagName, variants), 0x5d);
    if (c === -1) throw this.peekError(Code.EofWhileParsingValue);
    if (c === 0x22 || c === 0x2d || c === 0x6e || c === 0x74 || c === 0x66 || isDigit(c)) {
      const value = this.parseValue();
      throw this.error(`invalid type: ${unexpected(value)}, expected ${expecting}`);
    }
    throw this.peekError(Code.ExpectedSomeValue);
  }

  private nestedTagged(body: () => Tagged, close: number): Tagged {
    try {
      return this.nested(body, close);
    } catch (e) {
      throw this.fixPosition(e);
    }
  }

  private taggedMap(tagName: string, variants: readonly string[]): Tagged {
    const content = new ContentMap();
    let variant = -1;
    let first = true;
    while (this.hasNextKey(first)) {
      first = false;
      this.i++;
      const key = this.parseString();
      if (key === tagName) {
        if (variant !== -1) throw new Unpositioned(`duplicate field \`${tagName}\``);
        this.parseColon();
        variant = this.variantIdentifier(variants);
      } else {
        this.parseColon();
        content.keys.push(key);
        content.values.push(this.parseValue());
      }
    }
    if (variant === -1) throw new Unpositioned(`missing field \`${tagName}\``);
    return { variant, content };
  }

  private taggedSeq(tagName: string, variants: readonly string[]): Tagged {
    if (!this.hasNextElement(true)) throw new Unpositioned(`missing field \`${tagName}\``);
    const variant = this.variantIdentifier(variants);
    const content: Content[] = [];
    while (this.hasNextElement(false)) content.push(this.parseValue());
    return { variant, content };
  }

  /** A variant's name read straight from JSON (serde_json's `deserialize_str`). */
  private variantIdentifier(variants: readonly string[]): number {
    const c = this.skipWhitespace();
    if (c === -1) throw this.peekError(Code.EofWhileParsingValue);
    if (c !== 0x22) {
      if (c === 0x5b || c === 0x7b)
        throw this.error(`invalid type: ${c === 0x5b ? 'sequence' : 'map'}, expected variant identifier`);
      const value = this.parseValue();
      throw this.error(`invalid type: ${unexpected(value)}, expected variant identifier`);
    }
    this.i++;
    const name = this.parseString();
    const index = variants.indexOf(name);
    if (index === -1) throw this.error(unknownVariant(name, variants));
    return index;
  }
}

// -- serde's words -----------------------------------------------------------------------------

/** serde's `OneOf`: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``. */
export function oneOf(names: readonly string[]): string {
  const quoted = names.map((n) => `\`${n}\``);
  if (quoted.length === 1) return quoted[0] as string;
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(', ')}`;
}

/** serde's `unknown_variant` text. */
export function unknownVariant(name: string, variants: readonly string[]): string {
  return `unknown variant \`${name}\`, expected ${oneOf(variants)}`;
}

/** serde's `unknown_field` text. */
export function unknownField(name: string, fields: readonly string[]): string {
  return fields.length === 0
    ? `unknown field \`${name}\`, there are no fields`
    : `unknown field \`${name}\`, expected ${oneOf(fields)}`;
}

/** How serde_json names an unexpected value in `invalid type` and `invalid value` errors. */
export function unexpected(value: Content): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'string') return `string ${rustDebugString(value)}`;
  if (value instanceof JsonNumber) {
    return value.kind === 'f'
      ? `floating point \`${formatFloat(value.value)}\``
      : `integer \`${value.kind === 'i' ? '-' : ''}${value.digits}\``;
  }
  return Array.isArray(value) ? 'sequence' : 'map';
}

/** A float as serde_json's errors print it (shortest round-trip digits, ryu's layout). */
export function formatFloat(value: number): string {
  if (Object.is(value, -0)) return '-0.0';
  if (value === 0) return '0.0';
  const sign = value < 0 ? '-' : '';
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  const point = exponent + 1; // where the decimal point goes, counted from the first digit
  if (point > 0 && point <= 16) {
    if (digits.length <= point) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
    return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  }
  if (point > -5 && point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  const scaled = digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
  return `${sign}${scaled}e${exponent}`;
}

/** A string as Rust's `{:?}` prints it. */
export function rustDebugString(s: string): string {
  let out = '"';
  for (const ch of s) {
    switch (ch) {
      case '"':
        out += '\\"';
        break;
      case '\\':
        out += '\\\\';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\0':
        out += '\\0';
        break;
      default:
        out += /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u.test(ch)
          ? `\\u{${(ch.codePointAt(0) as number).toString(16)}}`
          : ch;
    }
  }
  return `${out}"`;
}
