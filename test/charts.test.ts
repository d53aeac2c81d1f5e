/**
 * The benchmark's charts (bench/charts.ts), drawn from the results fixture in
 * test/fixtures/charts/ into a fresh folder: each SVG parses as XML, is titled with axes
 * labelled, draws one mark per figure of the results, and marks the targets.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ratioFigures, readInputs } from '../bench/chart-data.js';
import { main, writeCharts } from '../bench/charts.js';
import { layoutWidth } from '../bench/text-width.js';
import { withHome } from './support/ledger.js';
import { ROOT } from './support/packed.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'charts');

/** The parsed SVG of `file`; any XML error, even one a browser would forgive, fails the test. */
function parseSvg(file: string): Element {
  const problems: string[] = [];
  const doc = new DOMParser({ onError: (level, message) => problems.push(`${level}: ${message}`) }).parseFromString(
    readFileSync(file, 'utf8'),
    'image/svg+xml',
  );
  assert.equal(problems, [], `${file} parses`);
  const root = doc.documentElement;
  assert.ok(root !== null && root.tagName === 'svg', `${file}: an <svg> root`);
  return root as Element;
}

/** Every element under `root` named `tag`. */
function elements(root: Element, tag: string): Element[] {
  return Array.from(root.getElementsByTagName(tag));
}

/** The items, and their aria-labels, of the marks named `mark` (a class of their group: `layer_0_marks`). */
function markItems(root: Element, mark: string): { label: string; element: Element }[] {
  return elements(root, 'g')
    .filter((g) => {
      const classes = (g.getAttribute('class') ?? '').split(' ');
      return classes.includes('role-mark') && classes.includes(mark);
    })
    .flatMap((g) => Array.from(g.childNodes).filter((n): n is Element => n.nodeType === 1))
    .map((element) => ({ label: element.getAttribute('aria-label') ?? '', element }));
}

/** The texts an SVG shows (titles, axis titles, labels), in document order. */
function texts(root: Element): string[] {
  return elements(root, 'text').map((t) => t.textContent ?? '');
}

/** The value after `key: ` in a mark's aria-label (`a: 1; b: x`). */
function field(label: string, key: string): string | undefined {
  return label
    .split('; ')
    .find((part) => part.startsWith(`${key}: `))
    ?.slice(key.length + 2);
}

/** The x offset a `transform` attribute moves by, and whether it turns what it holds. */
function shift(element: Element): { readonly x: number; readonly turned: boolean } {
  let x = 0;
  let turned = false;
  for (const [, op, args] of (element.getAttribute('transform') ?? '').matchAll(/(\w+)\(([^)]*)\)/g)) {
    if (op === 'rotate') turned = true;
    else if (op === 'translate' && !turned) x += Number((args ?? '').split(/[ ,]+/)[0]);
  }
  return { x, turned };
}

/**
 * The horizontal extent of what an SVG draws: its texts (each line at the width the charts lay
 * it out at, anchored as drawn), the frames of its plots, its rules.
 */
function drawnExtent(root: Element): { left: number; right: number } {
  let left = Number.POSITIVE_INFINITY;
  let right = Number.NEGATIVE_INFINITY;
  const reach = (from: number, to: number): void => {
    left = Math.min(left, from);
    right = Math.max(right, to);
  };
  const visit = (element: Element, x: number): void => {
    const moved = shift(element);
    const at = x + moved.x;
    if (element.tagName === 'text') {
      const size = Number.parseFloat(element.getAttribute('font-size') ?? '11');
      const bold = element.getAttribute('font-weight') === 'bold';
      const lines = Array.from(element.childNodes).filter((n): n is Element => n.nodeType === 1);
      for (const line of lines.length === 0 ? [element] : lines) {
        // a turned text (an axis title up the side) is as wide as its font is high
        const width = moved.turned ? size : layoutWidth(line.textContent ?? '', size, bold);
        const anchor = element.getAttribute('text-anchor') ?? 'start';
        const from = moved.turned
          ? at - size / 2
          : at - (anchor === 'end' ? width : anchor === 'middle' ? width / 2 : 0);
        reach(from, from + width);
      }
      return;
    }
    const frame = /^M([\d.-]+),[\d.-]+h([\d.]+)v/.exec(element.getAttribute('d') ?? '');
    if (element.tagName === 'path' && frame !== null && Number(frame[2]) > 0)
      reach(at + Number(frame[1]), at + Number(frame[1]) + Number(frame[2]));
    if (element.tagName === 'line')
      reach(at + Number(element.getAttribute('x1') ?? 0), at + Number(element.getAttribute('x2') ?? 0));
    for (const child of Array.from(element.childNodes)) if (child.nodeType === 1) visit(child as Element, at);
  };
  visit(root, 0);
  return { left, right };
}

/** An SVG's width fits what it draws: all of it inside, and no blank band on its right. */
function assertFits(file: string): void {
  const svg = parseSvg(file);
  const width = Number(svg.getAttribute('width'));
  const { left, right } = drawnExtent(svg);
  assert.ok(left >= 0, `${file}: drawn from x=${left.toFixed(1)}, not cut off on the left`);
  assert.ok(right <= width + 0.5, `${file}: drawn to x=${right.toFixed(1)}, within its width ${width}`);
  // Vega-Lite's padding is 5: anything wider is a band of nothing
  assert.ok(width - right <= 8, `${file}: drawn to x=${right.toFixed(1)} of ${width}, a blank band on the right`);
}

async function drawn<T>(body: (dir: string) => T | Promise<T>): Promise<T> {
  return withHome(async (home) => {
    const written = await writeCharts(readInputs(FIXTURE), home.dir);
    assert.equal(
      written.map((file) => file.slice(home.dir.length + 1)),
      ['replay-rate.svg', 'replay-rss.svg', 'ratios.svg', 'append.svg'],
    );
    return body(home.dir);
  });
}

test('every chart is an SVG with a white background, a title, and axes titled with their units', async () => {
  await drawn((dir) => {
    const expected: { [file: string]: string[] } = {
      'replay-rate.svg': [
        'Replay rate against ledger size',
        'Ledger size (records, log scale)',
        'Replay rate (records/s), log scale',
      ],
      'replay-rss.svg': [
        'Peak RSS of a replaying process against ledger size',
        'Ledger size (records, log scale)',
        'Peak RSS (MiB), log scale',
      ],
      'ratios.svg': [
        'Each figure against its target',
        'Ratio to the bare loop of the same run (1 = as fast as the limit; log scale)',
      ],
      'append.svg': [
        'Append throughput against appenders, group commit',
        'Appenders at once (log scale)',
        'Durable appends (records/s)',
      ],
    };
    for (const [file, titles] of Object.entries(expected)) {
      const svg = parseSvg(join(dir, file));
      const background = elements(svg, 'rect')[0];
      assert.is(background?.getAttribute('fill'), 'white', `${file}: a white background`);
      assert.is(background?.getAttribute('width'), svg.getAttribute('width'), `${file}: the background covers it`);
      const shown = texts(svg);
      for (const title of titles) assert.ok(shown.includes(title), `${file} shows "${title}": ${shown.join(' | ')}`);
      assert.ok(
        shown.some((t) => t.includes('Fixture CPU')),
        `${file}: the subtitle names the machine`,
      );
    }
  });
});

test('each chart is as wide as what it draws, with nothing cut off: from the fixture and in docs/charts', async () => {
  await drawn((dir) => {
    for (const file of readdirSync(dir).sort()) assertFits(join(dir, file));
  });
  const committed = readdirSync(join(ROOT, 'docs', 'charts')).filter((f) => f.endsWith('.svg'));
  assert.equal(committed.sort(), ['append.svg', 'ratios.svg', 'replay-rate.svg', 'replay-rss.svg']);
  for (const file of committed) assertFits(join(ROOT, 'docs', 'charts', file));
});

test("the ratio chart has the LevelDB replay's share of classic-level's iterator where the results hold it", () => {
  const inputs = readInputs(FIXTURE);
  const [first, ...rest] = inputs.run.replay;
  assert.ok(first?.level !== undefined, "the fixture's first size has a LevelDB replay");
  const limit = { engine: { perSecond: 1000 }, ratio: 0.5, share: 0.75 };
  const replay = [{ ...first, level: { ...first.level, limit } }, ...rest];
  const figures = ratioFigures({ ...inputs, run: { ...inputs.run, replay } });
  assert.equal(
    figures.filter((f) => f.figure.includes('iterator')).map((f) => [f.figure, f.ratio, f.target]),
    [["Replay 100k, LevelDB, of classic-level's iterator", 0.75, 0.9]],
  );
});

test('the ratio chart draws a bar per figure and a target tick on each, colored by whether it is met', async () => {
  const figures = ratioFigures(readInputs(FIXTURE));
  // the fixture's figures, each with the target the issue sets for it
  assert.equal(
    figures.map((f) => [f.figure, f.ratio, f.target]),
    [
      ['Replay 100k, JSONL', 0.667, 2],
      ['Replay 1M, JSONL', 2.143, 2],
      ['Replay 10M, JSONL', 1.5, 2],
      ['Replay 100k, LevelDB', 0.333, 1],
      ['Replay 1M, LevelDB', 0.357, 1],
      ['Replay rate, 10M against 1M', 0.8, 0.9],
      ['Read model cold build, 10M', 0.13, 0.33],
      ['Append, 1 appender', 0.98, 0.95],
      ['Append, 1 appender, paired', 0.8, 0.95],
      ['Append, 16 appenders', 10, 14],
      ['Append, 64 appenders', 26, 25],
      ['Append, LevelDB, 1 appender', 0.6, 0.8],
      ['Append, LevelDB, 16 appenders', 6, 10],
    ],
  );
  await drawn((dir) => {
    const svg = parseSvg(join(dir, 'ratios.svg'));
    const bars = markItems(svg, 'layer_0_marks');
    const ticks = markItems(svg, 'layer_1_marks');
    assert.is(bars.length, figures.length, 'one bar per figure');
    assert.is(ticks.length, figures.length, 'one target tick per figure');
    for (const f of figures) {
      const bar = bars.filter((b) => field(b.label, 'figure') === f.figure);
      assert.is(bar.length, 1, `one bar for ${f.figure}`);
      const fill = (bar[0] as { element: Element }).element.getAttribute('fill');
      assert.is(fill, f.ratio >= f.target ? '#2e7d32' : '#ef6c00', `${f.figure}: met or not`);
      const tick = ticks.find((t) => field(t.label, 'figure') === f.figure);
      assert.ok(tick?.label.includes(`: ${f.target};`) === true, `${f.figure}'s tick at ${f.target}`);
    }
    const labels = texts(svg);
    assert.ok(labels.includes('2.14 (target ≥ 2.00)'), 'the ratio and its target written beside the bar');
  });
});

test('the replay charts draw a point per backend and size, and the RSS chart marks the 1 GiB target', async () => {
  await drawn((dir) => {
    const rate = markItems(parseSvg(join(dir, 'replay-rate.svg')), 'layer_0_layer_1_marks').map((p) => p.label);
    const series = (labels: string[], name: string): string[] =>
      labels.filter((l) => field(l, 'series') === name).map((l) => field(l, 'Ledger size (records, log scale)') ?? '');
    assert.equal(series(rate, 'JSONL'), ['100k', '1M', '10M']);
    assert.equal(series(rate, 'LevelDB'), ['100k', '1M'], 'LevelDB where measured, not drawn as 0 at 10M');
    assert.equal(series(rate, 'read model cold build (LevelDB)'), ['100k', '10M']);
    assert.ok(
      rate.includes('Ledger size (records, log scale): 1M; Replay rate (records/s), log scale: 1.5M; series: JSONL'),
    );

    const svg = parseSvg(join(dir, 'replay-rss.svg'));
    const rss = markItems(svg, 'layer_0_layer_1_marks').map((p) => p.label);
    // the replay's own peaks stand for JSONL: the read-model benchmark's replay is not drawn beside them
    assert.equal(series(rss, 'JSONL'), ['100k', '1M', '10M']);
    assert.equal(series(rss, 'JSONL replay + queries (read-model benchmark)'), []);
    assert.equal(series(rss, 'read model: warm open + queries'), ['100k', '10M']);
    const rule = markItems(svg, 'layer_1_layer_0_marks');
    assert.equal(
      rule.map((r) => r.label),
      ['value: 1024'],
      'one target line at 1 GiB',
    );
    assert.ok(texts(svg).includes('target: ≤ 1 GiB at 10M'));
  });
});

test('the append chart draws each backend by appenders, the sync loop, and the targets', async () => {
  await drawn((dir) => {
    const svg = parseSvg(join(dir, 'append.svg'));
    const points = markItems(svg, 'layer_0_layer_1_marks').map((p) => p.label);
    const at = (name: string): string[] =>
      points
        .filter((l) => field(l, 'series') === name)
        .map((l) => `${field(l, 'Appenders at once (log scale)')}=${field(l, 'Durable appends (records/s)')}`);
    assert.equal(at('JSONL'), ['1=4.9k', '16=50k', '64=130k']);
    assert.equal(at('LevelDB'), ['1=3k', '16=30k']);
    assert.equal(at('bare loop: a write + fdatasync per record'), ['1=5k', '16=5k', '64=5k']);
    const targets = markItems(svg, 'layer_1_marks').map((p) => p.label);
    assert.equal(targets.length, 3, 'a target mark at 1, 16 and 64 appenders');
    assert.ok(
      targets.some((t) => t.includes(': 64;') && t.includes(': 125k;')),
      '64 appenders: 25x the sync loop',
    );
    const labels = texts(svg);
    for (const text of ['≥ 0.95×', '≥ 14×', '≥ 25×']) assert.ok(labels.includes(text), `the target ${text} written`);
  });
});

test('make charts: a status of 0 with the charts drawn, 1 (nothing drawn) without results, 2 on a bad argument', async () => {
  await withHome(async (home) => {
    const out = join(home.dir, 'charts');
    assert.is(await main(['--results', FIXTURE, '--out', out]), 0);
    assert.equal(readdirSync(out).sort(), ['append.svg', 'ratios.svg', 'replay-rate.svg', 'replay-rss.svg']);

    const broken = join(home.dir, 'broken');
    const empty = join(home.dir, 'nothing');
    assert.is(await main(['--results', home.dir, '--out', empty]), 1, 'no results.json');
    writeFileSync(join(home.dir, 'results.json'), '{"replay": 1}');
    assert.is(await main(['--results', home.dir, '--out', broken]), 1, 'a results.json of another shape');
    copyFileSync(join(FIXTURE, 'results.json'), join(home.dir, 'results.json'));
    writeFileSync(join(home.dir, 'index-results.json'), '{"results": {}}');
    assert.is(await main(['--results', home.dir, '--out', broken]), 1, 'an index-results.json of another shape');
    writeFileSync(join(home.dir, 'index-results.json'), '{"results": [');
    assert.is(await main(['--results', home.dir, '--out', broken]), 1, 'an index-results.json cut short');
    assert.not.ok(existsSync(empty) || existsSync(broken), 'nothing drawn from results it cannot read');

    assert.is(await main(['--out']), 2);
    assert.is(await main(['--colour', 'red']), 2);
  });
});

test.run();
