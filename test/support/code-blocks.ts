/**
 * Test support: the TypeScript examples of the docs, as the docs-examples test checks them. A
 * Markdown page gives each ```` ```ts ```` (or ```` ```typescript ````) block; a TypeScript file
 * gives the same fences inside the `@example` tags of its doc comments, with the comment's ` * `
 * taken off each line.
 *
 * A block opts out of being run with a marker on the line right before its fence, visible in the
 * page's source: `<!-- example: not run: <why> -->`. It is still type-checked. A marker without a
 * reason, one of another kind, or one that no TypeScript block follows is an error, so that a typo
 * cannot quietly turn a check off.
 */

/** One TypeScript block of a doc. */
export interface CodeBlock {
  /** The doc's path, as given. */
  readonly path: string;
  /** The line of the block's first line of code, counted from 1. */
  readonly line: number;
  readonly code: string;
  /** The reason it is not run, when it opts out. */
  readonly notRun: string | null;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const TYPESCRIPT = new Set(['ts', 'typescript']);
const MARKER = /^\s*<!--\s*example:(.*?)-->\s*$/;
const NOT_RUN = /^\s*not run:(.*)$/;

/** A marker that the test refuses, with where and why. */
export class MarkerError extends Error {
  constructor(path: string, line: number, why: string) {
    super(
      `${path}:${line}: ${why}; an example opts out as <!-- example: not run: <why> --> right before its \`\`\`ts fence`,
    );
    this.name = 'MarkerError';
  }
}

/**
 * The TypeScript blocks of Markdown `text`, in order. `lines` maps the text's lines to the
 * file's (for blocks found inside a doc comment); by default line n is line n.
 */
export function markdownBlocks(
  path: string,
  text: string,
  lineOf: (index: number) => number = (index) => index + 1,
): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  let pendingMarker: { readonly line: number; readonly reason: string } | null = null;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const marker = MARKER.exec(line);
    if (marker !== null) {
      const notRun = NOT_RUN.exec(marker[1] as string);
      if (notRun === null)
        throw new MarkerError(path, lineOf(index), `an example marker of an unknown kind: ${line.trim()}`);
      const reason = (notRun[1] as string).trim();
      if (reason === '') throw new MarkerError(path, lineOf(index), 'an example opts out without a reason');
      pendingMarker = { line: lineOf(index), reason };
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence === null) {
      if (pendingMarker !== null && line.trim() !== '')
        throw new MarkerError(path, pendingMarker.line, 'an example marker that no ```ts block follows');
      continue;
    }
    const [, indent = '', ticks = '', language = ''] = fence;
    const closes = (candidate: string): boolean => {
      const trimmed = candidate.trim();
      return trimmed.length >= ticks.length && [...trimmed].every((c) => c === ticks[0]);
    };
    const close = lines.findIndex((candidate, at) => at > index && closes(candidate));
    const end = close === -1 ? lines.length : close;
    if (TYPESCRIPT.has(language)) {
      const code = lines
        .slice(index + 1, end)
        .map((codeLine) => (codeLine.startsWith(indent) ? codeLine.slice(indent.length) : codeLine.trimStart()))
        .join('\n');
      blocks.push({ path, line: lineOf(index + 1), code: `${code}\n`, notRun: pendingMarker?.reason ?? null });
    } else if (pendingMarker !== null) {
      throw new MarkerError(
        path,
        pendingMarker.line,
        `an example marker before a \`\`\`${language} block, not a \`\`\`ts one`,
      );
    }
    pendingMarker = null;
    index = end;
  }
  if (pendingMarker !== null)
    throw new MarkerError(path, pendingMarker.line, 'an example marker that no ```ts block follows');
  return blocks;
}

const DOC_COMMENT = /\/\*\*[\s\S]*?\*\//g;

/** The TypeScript blocks of the `@example` tags in the doc comments of TypeScript `source`. */
export function exampleBlocks(path: string, source: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const comment of source.matchAll(DOC_COMMENT)) {
    const firstLine = source.slice(0, comment.index).split('\n').length;
    const lines = comment[0].split('\n').map((line) => line.replace(/^\s*\/?\*\*?\/?\s?/, '').replace(/\s*\*\/$/, ''));
    // An @example runs to the next tag or the comment's end; only its fenced TypeScript counts.
    for (let index = 0; index < lines.length; index++) {
      if (!(lines[index] as string).startsWith('@example')) continue;
      let end = index + 1;
      while (end < lines.length && !/^@\w/.test(lines[end] as string)) end++;
      const base = firstLine + index + 1;
      blocks.push(...markdownBlocks(path, lines.slice(index + 1, end).join('\n'), (at) => base + at));
      index = end - 1;
    }
  }
  return blocks;
}
