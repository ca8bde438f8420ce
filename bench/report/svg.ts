/**
 * Three small chart kinds drawn as inline SVG, so the report is one file
 * that opens anywhere without a network or a chart library. Colours come
 * from the caller (one per server: colours.ts), never from a bar's or a
 * line's position, so a server looks the same in every chart. Every chart
 * has an accessible name (`role="img"`, `aria-label` and a `<title>`), and
 * no text depends on a guess of how wide the browser's font is, except the
 * line charts' legend, which e2e/bench-report.spec.ts measures in Chromium.
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

/** The opening of a chart: its size, and its accessible name as `aria-label` and `<title>`. */
function svgOpen(width: number, height: number, name: string): string {
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(name)}"><title>${escapeHtml(name)}</title>`;
}

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

/**
 * Horizontal bars, one per item, each under its line of text (the label,
 * then the value and `unit`, then the note), so a label of any length has
 * the chart's whole width and never runs off its left edge. The axis is
 * titled `axisTitle`; `name` is the chart's accessible name.
 */
export function barChart(bars: Bar[], unit: string, axisTitle: string, name: string): string {
  const width = 720;
  const row = 38;
  const height = bars.length * row + 40;
  const max = niceMax(Math.max(...bars.map((b) => b.value)));
  /** The bars' right end: a little inside the chart, so the axis's last figure ends inside it too. */
  const end = width - 4;
  const scale = (v: number) => (end * v) / max;
  const axisY = height - 30;
  const items = bars
    .map((bar, i) => {
      const y = i * row + 4;
      const w = Math.max(1, scale(bar.value));
      const value = `${fmt(bar.value)} ${unit}${bar.note ? ` ${bar.note}` : ''}`;
      return `<text x="0" y="${y + 12}" class="bar-label"><tspan class="label">${escapeHtml(bar.label)}</tspan>: ${escapeHtml(value)}</text>
<rect x="0" y="${y + 17}" width="${w.toFixed(1)}" height="14" fill="${bar.colour}" rx="2"/>`;
    })
    .join('\n');
  return `${svgOpen(width, height, name)}${items}
<line x1="0" y1="${axisY}" x2="${end}" y2="${axisY}" stroke="#999"/>
<text x="0" y="${axisY + 14}" class="axis">0</text><text x="${end}" y="${axisY + 14}" class="axis" text-anchor="end">${fmt(max)}</text>
<text x="${width / 2}" y="${height - 4}" text-anchor="middle" class="axis">${escapeHtml(axisTitle)}</text></svg>`;
}

/** The plot's own width; the legend is added to it. */
const PLOT_WIDTH = 490;
/** A generous width of one character of the legend's 12 px text (measured in e2e/bench-report.spec.ts). */
const LEGEND_CHAR_PX = 7.5;

export interface Series {
  name: string;
  colour: string;
  points: [number, number][];
}

export interface LineChartOptions {
  /** The chart's accessible name. */
  name: string;
  /** The unit of a y value, for the points' tooltips ("p50 → 3 ms"). */
  yUnit: string;
  /** Evenly spaced categories instead of a numeric x axis (x is the index). */
  categories?: string[];
  /**
   * A log y axis, for figures that span orders of magnitude (latency
   * percentiles: p50 of 3 ms and a p100 of 1 s would flatten the rest on a
   * linear one). Values below its lowest decade are drawn on it.
   */
  logY?: boolean;
}

/**
 * Lines over a numeric x axis (log scale when the x values span 10× or more),
 * or over evenly spaced `categories`. Each point's tooltip names its series,
 * its x (or category) and its y with `yUnit`.
 */
export function lineChart(
  series: Series[],
  xLabel: string,
  yLabel: string,
  { name, yUnit, categories, logY = false }: LineChartOptions,
): string {
  // The legend, right of the plot, is as wide as its longest name.
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
  const plotH = height - pad.top - pad.bottom;
  const positive = ys.filter((y) => y > 0);
  // Log: whole decades from below the smallest positive value to above the largest.
  const decadeLow = 10 ** Math.floor(Math.log10(Math.min(1, ...positive)));
  const decadeHigh = 10 ** Math.ceil(Math.log10(Math.max(decadeLow * 10, ...positive)));
  const yMax = logY ? decadeHigh : niceMax(Math.max(...ys));
  const ty = logY
    ? (y: number) =>
        (Math.log10(Math.max(y, decadeLow)) - Math.log10(decadeLow)) /
        (Math.log10(decadeHigh) - Math.log10(decadeLow))
    : (y: number) => y / yMax;
  const px = (x: number) => pad.left + ((tx(x) - tx(xMin)) / span) * (width - pad.left - pad.right);
  const py = (y: number) => height - pad.bottom - ty(y) * plotH;
  const ticks = [...new Set(xs)].sort((a, b) => a - b);
  const yTicks = logY
    ? Array.from(
        { length: Math.round(Math.log10(decadeHigh / decadeLow)) + 1 },
        (_, i) => decadeLow * 10 ** i,
      )
    : [0, 0.25, 0.5, 0.75, 1].map((f) => f * yMax);
  const grid = yTicks
    .map(
      (y) =>
        `<line x1="${pad.left}" x2="${width - pad.right}" y1="${py(y)}" y2="${py(y)}" stroke="#eee"/><text x="${pad.left - 6}" y="${py(y) + 4}" text-anchor="end" class="axis">${fmt(y)}</text>`,
    )
    .join('');
  const xName = (x: number) => categories?.[x] ?? fmt(x);
  const xTicks = ticks
    .map(
      (x) =>
        `<text x="${px(x)}" y="${height - pad.bottom + 20}" text-anchor="middle" class="axis">${escapeHtml(xName(x))}</text>`,
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
            `<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${s.colour}"><title>${escapeHtml(`${s.name}: ${xName(x)} → ${fmt(y)} ${yUnit}`)}</title></circle>`,
        )
        .join('');
      return `<path d="${d}" fill="none" stroke="${s.colour}" stroke-width="2"/>${dots}<rect x="${width - pad.right + 12}" y="${pad.top + i * 20}" width="12" height="12" fill="${s.colour}"/><text x="${width - pad.right + 30}" y="${pad.top + i * 20 + 11}">${escapeHtml(s.name)}</text>`;
    })
    .join('');
  return `${svgOpen(width, height, name)}${grid}${xTicks}${lines}
<text x="${(pad.left + width - pad.right) / 2}" y="${height - 4}" text-anchor="middle" class="axis">${escapeHtml(xLabel)}${log ? ' (log scale)' : ''}</text>
<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})" text-anchor="middle" class="axis">${escapeHtml(yLabel)}${logY ? ' (log scale)' : ''}</text></svg>`;
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
  axes: { x: string; y: string; xUnit: string },
  fill: string,
  name: string,
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
      return `<rect x="${px(from).toFixed(1)}" y="${py(c).toFixed(1)}" width="${Math.max(1, px(to) - px(from) - 0.5).toFixed(1)}" height="${(py(0) - py(c)).toFixed(1)}" fill="${fill}"><title>${escapeHtml(`${fmt(from)}–${fmt(to)} ${axes.xUnit}: ${c} ${axes.y}`)}</title></rect>`;
    })
    .join('');
  const ticks = [0, 0.5, 1]
    .map(
      (f) =>
        `<text x="${px(f * xMax)}" y="${height - pad.bottom + 14}" text-anchor="${f === 1 ? 'end' : 'middle'}" class="axis">${fmt(f * xMax)}</text><text x="${pad.left - 4}" y="${py(f * yMax) + 4}" text-anchor="end" class="axis">${fmt(f * yMax)}</text>`,
    )
    .join('');
  return `${svgOpen(width, height, name)}${cols}
<line x1="${pad.left}" y1="${py(0)}" x2="${width - pad.right}" y2="${py(0)}" stroke="#999"/><line x1="${pad.left}" y1="${py(0)}" x2="${pad.left}" y2="${pad.top}" stroke="#999"/>${ticks}
<text x="${pad.left + plotW / 2}" y="${height - 6}" text-anchor="middle" class="axis">${escapeHtml(axes.x)}</text>
<text x="12" y="${pad.top + plotH / 2}" transform="rotate(-90 12 ${pad.top + plotH / 2})" text-anchor="middle" class="axis">${escapeHtml(axes.y)}</text></svg>`;
}
