/**
 * CRC-32C (Castagnoli), the checksum LevelDB puts on its files' records and blocks, and the one
 * ledgerstore seals its own values and marker files with (`lib/sealed-value.ts`). Reads nothing,
 * changes nothing.
 *
 * @module
 */

/** CRC-32C (Castagnoli) lookup tables, for slicing by 8 bytes. */
const TABLES = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let s = 1; s < 8; s++) {
      const previous = t[(s - 1) * 256 + n] as number;
      t[s * 256 + n] = (previous >>> 8) ^ (t[previous & 0xff] as number);
    }
  }
  return t;
})();

/** The CRC-32C of `bytes` (of `bytes[from, to)`), continuing `crc` (the CRC of what came before them). */
export function crc32c(bytes: Uint8Array, crc = 0, from = 0, to = bytes.length): number {
  const t = TABLES;
  let c = ~crc;
  let i = from;
  const n = to;
  for (; i + 8 <= n; i += 8) {
    const low =
      c ^
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24));
    c =
      (t[1792 + (low & 0xff)] as number) ^
      (t[1536 + ((low >>> 8) & 0xff)] as number) ^
      (t[1280 + ((low >>> 16) & 0xff)] as number) ^
      (t[1024 + (low >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < n; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

/** LevelDB stores a CRC masked, so that the CRC of bytes that hold CRCs is not degenerate: the CRC it stood for. */
export function unmask(masked: number): number {
  const rotated = (masked - 0xa282ead8) >>> 0;
  return ((rotated >>> 17) | (rotated << 15)) >>> 0;
}
