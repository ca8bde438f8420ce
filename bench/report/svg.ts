/**
 * Three small chart kinds drawn as inline SVG, so the report is one file
 * that opens anywhere without a network or a chart library.
 */

export const escapeHtml = (text: string | number): string =>
  String(text).replace(
    /[&<>"]/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`,
  );

const PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#9333ea', '#ea580c', '#0891b2'];
export const colour = (i: number) => PALETTE[i % PALETTE.length]!;

const fmt = (value: number) =>
  value >= 10_000
    ? `${Math.round(value / 1000)}k`
    : value >= 100
      ? String(Math.round(value))
      : String(Math.round(value * 10) / 10);

/** A "nice" upper bound for an axis. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].map((k) => k * step).find((v) => v >= value)!;
}

export interface Bar {
  label: string;
  value: number;
  note?: string;
}

/** Horizontal bars, one per item, with the value at the end. */
export function barChart(bars: Bar[], unit: string): string {
  const width = 720;
  const left = 230;
  const row = 26;
  const height = bars.length * row + 30;
  const max = niceMax(Math.max(...bars.map((b) => b.value)));
  const scale = (v: number) => ((width - left - 90) * v) / max;
  const items = bars
    .map((bar, i) => {
      const y = i * row + 8;
      const w = Math.max(1, scale(bar.value));
      return `<text x="${left - 8}" y="${y + 15}" text-anchor="end">${escapeHtml(bar.label)}</text>
<rect x="${left}" y="${y}" width="${w}" height="${row - 8}" fill="${colour(i)}" rx="2"/>
<text x="${left + w + 6}" y="${y + 15}">${escapeHtml(fmt(bar.value))} ${escapeHtml(unit)}${bar.note ? ` ${escapeHtml(bar.note)}` : ''}</text>`;
    })
    .join('\n');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">${items}
<line x1="${left}" y1="${height - 20}" x2="${width - 90}" y2="${height - 20}" stroke="#999"/>
<text x="${left}" y="${height - 4}" class="axis">0</text><text x="${width - 90}" y="${height - 4}" class="axis" text-anchor="end">${fmt(max)} ${escapeHtml(unit)}</text></svg>`;
}

export interface Series {
  name: string;
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
  const width = 720;
  const height = 300;
  const pad = { left: 60, right: 170, top: 12, bottom: 40 };
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
            `<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${colour(i)}"><title>${escapeHtml(s.name)}: ${fmt(x)} → ${fmt(y)}</title></circle>`,
        )
        .join('');
      return `<path d="${d}" fill="none" stroke="${colour(i)}" stroke-width="2"/>${dots}<rect x="${width - pad.right + 12}" y="${pad.top + i * 20}" width="12" height="12" fill="${colour(i)}"/><text x="${width - pad.right + 30}" y="${pad.top + i * 20 + 11}">${escapeHtml(s.name)}</text>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">${grid}${xTicks}${lines}
<text x="${(pad.left + width - pad.right) / 2}" y="${height - 4}" text-anchor="middle" class="axis">${escapeHtml(xLabel)}${log ? ' (log scale)' : ''}</text>
<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})" text-anchor="middle" class="axis">${escapeHtml(yLabel)}</text></svg>`;
}

/** Columns of a histogram: how many samples fell under each edge. */
export function histogramChart(
  edges: number[],
  counts: number[],
  unit: string,
  fill = colour(0),
): string {
  const width = 340;
  const height = 160;
  const pad = 24;
  const max = Math.max(1, ...counts);
  const w = (width - 2 * pad) / counts.length;
  const cols = counts
    .map((c, i) => {
      const h = ((height - 2 * pad) * c) / max;
      return `<rect x="${pad + i * w}" y="${height - pad - h}" width="${Math.max(1, w - 1)}" height="${h}" fill="${fill}"><title>≤ ${fmt(edges[i]!)} ${escapeHtml(unit)}: ${c}</title></rect>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img">${cols}
<line x1="${pad}" y1="${height - pad}" x2="${width - pad}" y2="${height - pad}" stroke="#999"/>
<text x="${pad}" y="${height - 6}" class="axis">0</text><text x="${width - pad}" y="${height - 6}" text-anchor="end" class="axis">${fmt(edges.at(-1) ?? 0)} ${escapeHtml(unit)}</text>
<text x="${pad}" y="14" class="axis">max count ${max}</text></svg>`;
}
