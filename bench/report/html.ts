/**
 * The one-file HTML report: the targets, met or missed; tables of figures;
 * the charts of `svg.ts`. Every server has one colour in every chart
 * (`colours.ts`). A quick run says, at the top and under each heading, that
 * its figures are not comparable.
 */
import type { Results } from '../lib/context.ts';
import { sharedCores } from '../lib/ratios.ts';
import { serverColour, workersServer } from './colours.ts';
import { barChart, escapeHtml, histogramChart, lineChart, type Series } from './svg.ts';
import { renderTable } from './table.ts';
import { type Judged, judgeTargets, verdictMark } from './targets.ts';

const byServer = <T extends { server: string; label: string }>(rows: T[]) => {
  const groups = new Map<string, { label: string; rows: T[] }>();
  for (const row of rows) {
    const group = groups.get(row.server) ?? { label: row.label, rows: [] };
    group.rows.push(row);
    groups.set(row.server, group);
  }
  return groups;
};

/**
 * A figure over N, one series per server: lines when there are several N,
 * bars when the run measured one N only (a line through one point is no line).
 */
function overN(
  series: Series[],
  xLabel: string,
  yLabel: string,
  unit: string,
  name: string,
): string {
  const xs = new Set(series.flatMap((s) => s.points.map(([x]) => x)));
  if (xs.size > 1) return lineChart(series, xLabel, yLabel, { name, yUnit: unit });
  const [n] = [...xs];
  return barChart(
    series.map((s) => ({
      label: s.name,
      value: s.points[0]?.[1] ?? 0,
      colour: s.colour,
      note: `(N = ${n})`,
    })),
    unit,
    `${yLabel}, ${xLabel} = ${n}`,
    name,
  );
}

function targetRow(judged: Judged): string {
  const css = judged.verdict === 'met' ? 'met' : judged.verdict === 'missed' ? 'missed' : 'na';
  return `<tr><td>${escapeHtml(judged.test)}</td><td>${escapeHtml(judged.target)}</td><td>${escapeHtml(judged.measured || '–')}</td><td class="${css}">${escapeHtml(verdictMark[judged.verdict])}</td></tr>`;
}

/** The targets of one test, as a line under its heading. */
function targetsOf(test: string, targets: Judged[]): string {
  const mine = targets.filter((t) => t.test === test);
  if (mine.length === 0) return '';
  return `<ul class="targets">${mine
    .map((t) => {
      const css = t.verdict === 'met' ? 'met' : t.verdict === 'missed' ? 'missed' : 'na';
      return `<li>Target: ${escapeHtml(t.target)}: <span class="${css}">${escapeHtml(verdictMark[t.verdict])}</span>${t.measured ? ` (${escapeHtml(t.measured)})` : ''}</li>`;
    })
    .join('')}</ul>`;
}

export function renderHtml(r: Results): string {
  const targets = judgeTargets(r);
  const quickNote = r.quick
    ? '<p class="quick">Quick run: cut-down sizes, figures not comparable with a full run or with each other.</p>'
    : '';
  const section = (title: string, intro: string, body: string, test?: string) =>
    `<section><h2>${escapeHtml(title)}</h2>${quickNote}<p>${intro}</p>${test ? targetsOf(test, targets) : ''}${body}</section>`;

  // ab's percentiles (50, 66, …, 99, 100) evenly spaced, on a log axis: p50
  // and p99 are a few ms, p100 can be a second, and the tail is what differs.
  const percentiles = Object.keys(r.t1[0]?.percentiles ?? {});
  const percentileSeries: Series[] = r.t1.map((row) => ({
    name: row.label,
    colour: serverColour(row.server),
    points: percentiles.map((q, i) => [i, row.percentiles[q] ?? 0] as [number, number]),
  }));
  const fanoutSeries = (pick: (row: Results['t5'][number]) => number): Series[] =>
    [...byServer(r.t5)].map(([server, { label, rows }]) => ({
      name: label,
      colour: serverColour(server),
      points: rows.map((row) => [row.clients, pick(row)] as [number, number]),
    }));
  const largest = [...byServer(r.t5)].map(([server, { label, rows }]) => ({
    server,
    label,
    row: rows.at(-1)!,
  }));
  const histogramScale = {
    xMax: Math.max(1, ...largest.map(({ row }) => row.histogram.edges.at(-1) ?? 0)),
    yMax: Math.max(1, ...largest.flatMap(({ row }) => row.histogram.counts)),
  };
  const t4: Series[] = [...byServer(r.t4)].map(([server, { label, rows }]) => ({
    name: label,
    colour: serverColour(server),
    points: rows.map((row) => [row.clients, row.meanMs] as [number, number]),
  }));
  const clusterRows = r.cluster.filter((c) => c.available);

  const sections = [
    section(
      'T1 GET /time: requests per second',
      "The articles' first test (<code>ab -k</code>): pure server overhead. The target compares the chat with bare Express; the in-memory <code>node:http</code> server shows what Node's HTTP stack allows.",
      barChart(
        r.t1.map((row) => ({
          label: row.label,
          value: row.requestsPerSec,
          colour: serverColour(row.server),
          note: row.cpuUsPerRequest ? `(${row.cpuUsPerRequest} µs CPU/req)` : '',
        })),
        'req/s',
        'req/s',
        'T1 GET /time: requests per second, by server',
      ) +
        '<h3>Latency distribution (ab percentiles)</h3>' +
        lineChart(percentileSeries, 'percentile', 'ms', {
          name: 'T1 GET /time: latency percentiles in ms, by server',
          yUnit: 'ms',
          categories: percentiles.map((q) => `p${q}`),
          logY: true,
        }),
      'T1',
    ),
    section(
      'T2 GET /history',
      'Reads of the latest page of a room.',
      barChart(
        r.t2.map((row) => ({
          label: `${row.label} [${row.store}]`,
          value: row.requestsPerSec,
          colour: serverColour(row.server),
        })),
        'req/s',
        'req/s',
        'T2 GET /history: requests per second, by server and store',
      ),
    ),
    section(
      'T3 POST /send',
      'Writes: each is acknowledged only once the store has it (SQLite fsyncs every commit).',
      barChart(
        r.t3.map((row) => ({
          label: `${row.label} [${row.store}]`,
          value: row.requestsPerSec,
          colour: serverColour(row.server),
        })),
        'req/s',
        'req/s',
        'T3 POST /send: requests per second, by server and store',
      ),
    ),
    section(
      'T4 one-second wait',
      'N polls answered by one send 1 s after they start: a non-blocking server answers each in about 1 s.',
      overN(
        t4,
        'waiting clients N',
        'mean ms per request',
        'ms',
        'T4 one-second wait: mean ms per request over N, by server',
      ),
    ),
    section(
      'T5 fan-out over N',
      "N clients each hold one poll, then one send; the time from the send to each client's complete answer.",
      '<h3>p99</h3>' +
        overN(
          fanoutSeries((row) => row.latency.p99),
          'waiting clients N',
          'p99 ms',
          'ms',
          'T5 fan-out: p99 ms from the send to the answer over N, by server',
        ) +
        '<h3>Server memory per waiting client: JS heap, after a full GC</h3>' +
        overN(
          fanoutSeries((row) => row.heapBytesPerClient / 1024),
          'waiting clients N',
          'KB per client',
          'KB',
          'T5 fan-out: JS heap KB per waiting client over N, by server',
        ) +
        '<h3>Server memory per waiting client: resident (RSS)</h3>' +
        overN(
          fanoutSeries((row) => row.bytesPerClient / 1024),
          'waiting clients N',
          'KB per client',
          'KB',
          'T5 fan-out: resident KB per waiting client over N, by server',
        ) +
        '<h3>Distribution at the largest N (same axes for every server)</h3>' +
        `<div class="row">${largest
          .map(
            ({ server, label, row }) =>
              `<figure>${histogramChart(
                row.histogram.edges,
                row.histogram.counts,
                histogramScale,
                { x: 'ms from the send to the complete answer', y: 'clients', xUnit: 'ms' },
                serverColour(server),
                `T5 fan-out: clients by ms from the send to the answer, ${label}, N=${row.clients}`,
              )}<figcaption>${escapeHtml(label)}, N=${row.clients}</figcaption></figure>`,
          )
          .join('')}</div>`,
      'T5',
    ),
    section(
      'T6 sustained delivery',
      'Subscribers re-poll with their cursor while 4 senders send numbered messages. The naive chat has no cursor: what arrives between two of its polls is lost.',
      barChart(
        r.t6.map((row) => ({
          label: row.label,
          value: row.deliveredPerSec,
          colour: serverColour(row.server),
          note: `(lost ${row.lost} of ${row.expected})`,
        })),
        'msg/s',
        'msg/s',
        'T6 sustained delivery: messages delivered per second, by server',
      ),
      'T6',
    ),
    section(
      'T7 CPU-bound handler',
      'A route that burns 50 ms of CPU, mixed with <code>/time</code>: one busy request blocks the event loop for everyone; a second worker takes half the load.',
      r.t7.some((row) => row.available)
        ? barChart(
            r.t7
              .filter((row) => row.available)
              .map((row) => ({
                label: `chat, WORKERS=${row.workers}: /time p99`,
                value: row.timeP99!,
                colour: serverColour(workersServer(row.workers)),
              })),
            'ms',
            'ms',
            'T7 CPU-bound handler: /time p99 ms, by number of workers',
          )
        : '<p>Cluster mode not available in this build.</p>',
    ),
    section(
      'Cluster: fan-out over the workers',
      `Polls spread over the workers by the kernel; the load generator competes for the same ${r.machine.cpus} cores (its CPU share is in the table).`,
      clusterRows.length > 0
        ? barChart(
            clusterRows.map((row) => ({
              label: `chat, WORKERS=${row.workers}: fan-out p99`,
              value: row.fanout!.latency.p99,
              colour: serverColour(workersServer(row.workers)),
            })),
            'ms',
            'ms',
            'Cluster: fan-out p99 ms, by number of workers',
          ) +
            barChart(
              clusterRows.map((row) => ({
                label: `chat, WORKERS=${row.workers}: delivered`,
                value: row.sustained!.deliveredPerSec,
                colour: serverColour(workersServer(row.workers)),
              })),
              'msg/s',
              'msg/s',
              'Cluster: messages delivered per second, by number of workers',
            )
        : '<p>Cluster mode not available in this build.</p>',
    ),
  ];

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Long-Poll Chat bench ${escapeHtml(r.date)}${r.quick ? ' (quick run, not comparable)' : ''}</title>
<style>
body{font:14px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em}
svg{font:12px system-ui,sans-serif;max-width:100%;height:auto}.axis{fill:#666;font-size:11px}
.row{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}figcaption{text-align:center;color:#555}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}.fail{color:#b91c1c}
table.targets{border-collapse:collapse}table.targets td,table.targets th{border:1px solid #ddd;padding:.3em .6em;text-align:left}
ul.targets{padding-left:1.2em}.met{color:#15803d;font-weight:600}.missed{color:#b91c1c;font-weight:600}.na{color:#666}
.caveat{color:#555}.label{font-weight:600}
.quick{background:#fef3c7;border:1px solid #f59e0b;padding:.4em .8em;border-radius:4px}
</style></head><body>
<h1>Long-Poll Chat benchmarks</h1>
${r.quick ? '<p class="quick"><strong>Quick run</strong> (<code>--quick</code>): every size is cut down so the run takes a minute. These figures only show that each test runs; they are not comparable with a full run, with another quick run, or with the targets.</p>' : ''}
<p>${r.quick ? 'Quick run' : 'Full run'}, ${escapeHtml(r.date)}, commit <code>${escapeHtml(r.machine.commit ?? 'not recorded')}</code>: ${r.machine.cpus} cores (${escapeHtml(r.machine.cpuModel)}), Node ${escapeHtml(r.machine.node)}, load average ${escapeHtml(r.machine.loadAverage.join(' '))}, open-file limit ${r.machine.openFileLimit.server}.</p>
<p class="caveat">${escapeHtml(sharedCores(r.machine))}</p>
${r.notes.length > 0 ? `<ul class="notes">${r.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>` : ''}
${r.failures.length > 0 ? `<ul class="fail">${r.failures.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>` : ''}
<section><h2>Targets</h2>
<table class="targets"><thead><tr><th>test</th><th>target</th><th>measured</th><th></th></tr></thead><tbody>
${targets.map(targetRow).join('\n')}
</tbody></table></section>
${sections.join('\n')}
<h2>All figures</h2><pre>${escapeHtml(renderTable(r))}</pre>
</body></html>
`;
}
