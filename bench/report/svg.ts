/**
 * Three small chart kinds drawn as inline SVG, so the report is one file
 * that opens anywhere without a network or a chart library. Colours come
 * from the caller (one per server: colours.ts), never from a bar's or a
 * line's position, so a server looks the same in every chart.
 */

export const escapeHtml = (text: string | number): string =>
  String(text).replace(
    /[&<>"]/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`,
  );

export const fmt = (value: number): string =>
  value >= 10_000
    ? `${Math.round(value / 1000)}k`
    : value >= 100
      ? String(Math.round(value))
      : String(Math.round(value * 10) / 10);

/** A "nice" upper bound for an axis. */
export function niceMax(value: number): number {
  if (value <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].map((k) => k * step).find((v) => v >= value)!;
}

export interface Bar {
  label: string;
  value: number;
  colour: string;
  note?: string;
}

/** Horizontal bars, one per item, with the value and `unit` at the end; the axis is titled `axisTitle`. */
export function barChart(bars: Bar[], unit: string, axisTitle = unit): string {
  const width = 720;
  const left = 230;
  /** Room right of the longest bar for its value and note. */
  const right = 200;
  const row = 26;
  const height = bars.length * row + 44;
  const max = niceMax(Math.max(...bars.map((b) => b.value)));
  const scale = (v: number) => ((width - left - right) * v) / max;
  const axisY = height - 34;
  const items = bars
    .map((bar, i) => {
      const y = i * row + 8;
      const w = Math.max(1, scale(bar.value));
      return `<text x="${left - 8}" y="${y + 15}" text-anchor="end">${escapeHtml(bar.label)}</text>
<rect x="${left}" y="${y}" width="${w}" height="${row - 8}" fill="${bar.colour}" rx="2"/>
<text x="${left + w + 6}" y="${y + 15}">${escapeHtml(fmt(bar.value))} ${escapeHtml(unit)}${bar.note ? ` ${escapeHtml(bar.note)}` : ''}</text>`;
    })
    .join('\n');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">${items}
<line x1="${left}" y1="${axisY}" x2="${width - right}" y2="${axisY}" stroke="#999"/>
<text x="${left}" y="${axisY + 16}" class="axis">0</text><text x="${width - right}" y="${axisY + 16}" class="axis" text-anchor="end">${fmt(max)}</text>
<text x="${(left + width - right) / 2}" y="${height - 4}" text-anchor="middle" class="axis">${escapeHtml(axisTitle)}</text></svg>`;
}

/** The plot's own width; the legend is added to it. */
const PLOT_WIDTH = 490;
const LEGEND_CHAR_PX = 7;

export interface Series {
  name: string;
  colour: string;
  points: [number, number][];
}

/**
 * Lines over a numeric x axis (log scale when the x values span 10× or more),
 * or, given `categories`, over evenly spaced categories (x is the index).
 */
export function lineChart(
  series: Series[],
  xLabel: string,
  yLabel: string,
  categories?: string[],
): string {
  // The legend, right of the plot, is as wide as its longest name: 12 px
  // text is at most about 7 px a character.
  const longest = Math.max(0, ...series.map((s) => s.name.length));
  const pad = { left: 60, right: 40 + longest * LEGEND_CHAR_PX, top: 12, bottom: 40 };
  const width = pad.left + PLOT_WIDTH + pad.right;
  const height = 300;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  if (xs.length === 0) return '<p>No data.</p>';
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const log = !categories && xMin > 0 && xMax / xMin >= 10;
  const tx = (x: number) => (log ? Math.log10(x) : x);
  const span = tx(xMax) - tx(xMin) || 1;
  const yMax = niceMax(Math.max(...ys));
  const px = (x: number) => pad.left + ((tx(x) - tx(xMin)) / span) * (width - pad.left - pad.right);
  const py = (y: number) => height - pad.bottom - (y / yMax) * (height - pad.top - pad.bottom);
  const ticks = [...new Set(xs)].sort((a, b) => a - b);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (f) =>
        `<line x1="${pad.left}" x2="${width - pad.right}" y1="${py(f * yMax)}" y2="${py(f * yMax)}" stroke="#eee"/><text x="${pad.left - 6}" y="${py(f * yMax) + 4}" text-anchor="end" class="axis">${fmt(f * yMax)}</text>`,
    )
    .join('');
  const xTicks = ticks
    .map(
      (x) =>
        `<text x="${px(x)}" y="${height - pad.bottom + 16}" text-anchor="middle" class="axis">${categories?.[x] ?? fmt(x)}</text>`,
    )
    .join('');
  const lines = series
    .map((s, i) => {
      const d = s.points
        .map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`)
        .join(' ');
      const dots = s.points
        .map(
          ([x, y]) =>
            `<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${s.colour}"><title>${escapeHtml(s.name)}: ${fmt(x)} → ${fmt(y)}</title></circle>`,
        )
        .join('');
      return `<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="2"/>${dots}<rect x="${width - pad.right + 12}" y="${pad.top + i * 20}" width="12" height="12" fill="${s.colour}"/><text x="${width - pad.right + 30}" y="${pad.top + i * 20 + 11}">${escapeHtml(s.name)}</text>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">${grid}${xTicks}${lines}
<text x="${(pad.left + width - pad.right) / 2}" y="${height - 4}" text-anchor="middle" class="axis">${escapeHtml(xLabel)}${log ? ' (log scale)' : ''}</text>
<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})" text-anchor="middle" class="axis">${escapeHtml(yLabel)}</text></svg>`;
}

export interface HistogramScale {
  /** Right end of the x axis, shared by the histograms drawn side by side. */
  xMax: number;
  /** Top of the y axis (a count), shared likewise. */
  yMax: number;
}

/**
 * Columns of a histogram: how many samples fell in each bucket (`counts[i]`
 * between `edges[i - 1]` and `edges[i]`), drawn on `scale`, so that
 * histograms of several servers compare by eye: same axes, same units.
 */
export function histogramChart(
  edges: number[],
  counts: number[],
  scale: HistogramScale,
  axes: { x: string; y: string },
  fill: string,
): string {
  const width = 340;
  const height = 190;
  const pad = { left: 44, right: 12, top: 10, bottom: 44 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const xMax = niceMax(scale.xMax);
  const yMax = niceMax(scale.yMax);
  const px = (x: number) => pad.left + (plotW * x) / xMax;
  const py = (y: number) => height - pad.bottom - (plotH * y) / yMax;
  const cols = counts
    .map((c, i) => {
      const from = i === 0 ? 0 : edges[i - 1]!;
      const to = edges[i]!;
      return `<rect x="${px(from).toFixed(1)}" y="${py(c).toFixed(1)}" width="${Math.max(1, px(to) - px(from) - 0.5).toFixed(1)}" height="${(py(0) - py(c)).toFixed(1)}" fill="${fill}"><title>${fmt(from)}–${fmt(to)}: ${c}</title></rect>`;
    })
    .join('');
  const ticks = [0, 0.5, 1]
    .map(
      (f) =>
        `<text x="${px(f * xMax)}" y="${height - pad.bottom + 14}" text-anchor="${f === 1 ? 'end' : 'middle'}" class="axis">${fmt(f * xMax)}</text><text x="${pad.left - 4}" y="${py(f * yMax) + 4}" text-anchor="end" class="axis">${fmt(f * yMax)}</text>`,
    )
    .join('');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">${cols}
<line x1="${pad.left}" y1="${py(0)}" x2="${width - pad.right}" y2="${py(0)}" stroke="#999"/><line x1="${pad.left}" y1="${py(0)}" x2="${pad.left}" y2="${pad.top}" stroke="#999"/>${ticks}
<text x="${pad.left + plotW / 2}" y="${height - 6}" text-anchor="middle" class="axis">${escapeHtml(axes.x)}</text>
<text x="12" y="${pad.top + plotH / 2}" transform="rotate(-90 12 ${pad.top + plotH / 2})" text-anchor="middle" class="axis">${escapeHtml(axes.y)}</text></svg>`;
}
