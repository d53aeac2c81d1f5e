/**
 * How wide the charts' text is, in the font they name (`Helvetica, Arial, sans-serif`: Arial has
 * Helvetica's widths), for Vega to lay the charts out by.
 *
 * Vega renders in Node.js without a canvas, and without one it guesses each text's width as 0.8
 * of its font size per character: about half again as wide as Helvetica's. It sizes the SVG to
 * those guesses, so each chart had a blank band on its right as wide as the guess was wrong for
 * its longest line (the subtitle). The widths here are Helvetica's own (its AFM files, in
 * thousandths of the font size), for the printable ASCII characters; any other character is
 * counted as wide as an `M`, so an unusual text is laid out too wide, never clipped.
 *
 * @module
 */
import * as vega from 'vega';

/** Helvetica's widths of the characters ` ` (32) to `~` (126), in thousandths of the font size. */
const REGULAR = [
  278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556,
  556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833,
  722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556,
  556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334,
  260, 334, 584,
];

/** Helvetica Bold's, likewise. */
const BOLD = [
  278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556,
  556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833,
  722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611,
  556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389,
  280, 389, 584,
];

/** The characters outside ASCII that the charts write, at their Arial widths. */
const OTHERS: { readonly [char: string]: number } = { '≥': 549, '≤': 549, '×': 584, '…': 1000, '·': 278 };

/**
 * How much wider than Helvetica the charts lay their text out: a viewer without Helvetica or
 * Arial draws it in its own sans-serif, DejaVu Sans on many Linux systems, up to about 15% wider.
 * Laid out at Helvetica's widths, such text would be clipped at the SVG's edges.
 */
export const FALLBACK_MARGIN = 1.15;

/** The width of `text` in Helvetica (bold when `bold`) at `fontSize` pixels. */
export function textWidth(text: string, fontSize: number, bold = false): number {
  const widths = bold ? BOLD : REGULAR;
  let thousandths = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    thousandths += (code >= 32 && code <= 126 ? widths[code - 32] : OTHERS[char]) ?? 833;
  }
  return (thousandths * fontSize) / 1000;
}

/** What Vega hands a text-measuring function: the text mark's item. */
interface TextItem {
  readonly fontSize?: number | string;
  readonly fontWeight?: number | string;
  readonly limit?: number;
}

/**
 * Vega's text metrics (vega-scenegraph's `textMetrics`, re-exported by `vega` but not in its
 * types): replacing `width` is how a renderer without a canvas measures text its own way.
 */
interface TextMetrics {
  width: (item: TextItem, text: unknown) => number;
}

/**
 * The width the charts lay `text` out at: its Helvetica width, and {@link FALLBACK_MARGIN} more.
 */
export function layoutWidth(text: string, fontSize: number, bold = false): number {
  return textWidth(text, fontSize, bold) * FALLBACK_MARGIN;
}

/**
 * Makes Vega measure text with {@link layoutWidth} from now on, in this process. A text with a
 * `limit` is truncated by Vega to it, so it is never counted wider.
 */
export function measureTextAsHelvetica(): void {
  const metrics = (vega as unknown as { readonly textMetrics: TextMetrics }).textMetrics;
  metrics.width = (item, text) => {
    const size = item.fontSize === undefined ? 11 : Number(item.fontSize) || 0;
    const weight = item.fontWeight;
    const bold = weight === 'bold' || weight === 'bolder' || Number(weight) >= 600;
    const width = layoutWidth(text === null || text === undefined ? '' : String(text).trim(), size, bold);
    return item.limit !== undefined && item.limit > 0 ? Math.min(width, item.limit) : width;
  };
}
