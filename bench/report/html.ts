/** The one-file HTML report: tables of figures and the charts of `svg.ts`. */
import type { Results } from '../lib/context.ts';
import { barChart, colour, escapeHtml, histogramChart, lineChart, type Series } from './svg.ts';
import { renderTable } from './table.ts';

const byServer = <T extends { label: string }>(rows: T[]) => {
  const groups = new Map<string, T[]>();
  for (const row of rows) groups.set(row.label, [...(groups.get(row.label) ?? []), row]);
  return groups;
};

function section(title: string, intro: string, body: string): string {
  return `<section><h2>${escapeHtml(title)}</h2><p>${intro}</p>${body}</section>`;
}

export function renderHtml(r: Results): string {
  // ab's percentiles (50, 66, …, 99, 100) evenly spaced: the tail is what differs.
  const percentiles = Object.keys(r.t1[0]?.percentiles ?? {});
  const percentileSeries: Series[] = r.t1.map((row) => ({
    name: row.label,
    points: percentiles.map((q, i) => [i, row.percentiles[q] ?? 0] as [number, number]),
  }));
  const fanoutSeries = (pick: (row: Results['t5'][number]) => number): Series[] =>
    [...byServer(r.t5)].map(([name, rows]) => ({
      name,
      points: rows.map((row) => [row.clients, pick(row)] as [number, number]),
    }));
  const largest = [...byServer(r.t5)].map(([name, rows]) => [name, rows.at(-1)!] as const);
  const t4 = [...byServer(r.t4)].map(([name, rows]) => ({
    name,
    points: rows.map((row) => [row.clients, row.meanMs] as [number, number]),
  }));
  const clusterRows = r.cluster.filter((c) => c.available);

  const sections = [
    section(
      'T1 GET /time: requests per second',
      "The articles' first test (<code>ab -k</code>): pure server overhead. The raw <code>node:http</code> server is the ceiling; the target is the chat at ≥ 0.9× a bare Express app.",
      barChart(
        r.t1.map((row) => ({
          label: row.label,
          value: row.requestsPerSec,
          note: row.cpuUsPerRequest ? `(${row.cpuUsPerRequest} µs CPU/req)` : '',
        })),
        'req/s',
      ) +
        '<h3>Latency distribution (ab percentiles)</h3>' +
        lineChart(
          percentileSeries,
          'percentile',
          'ms',
          percentiles.map((q) => `${q}%`),
        ),
    ),
    section(
      'T2 GET /history',
      'Reads of the latest page of a room.',
      barChart(
        r.t2.map((row) => ({ label: `${row.label} [${row.store}]`, value: row.requestsPerSec })),
        'req/s',
      ),
    ),
    section(
      'T3 POST /send',
      'Writes: each is acknowledged only once the store has it (SQLite fsyncs every commit).',
      barChart(
        r.t3.map((row) => ({ label: `${row.label} [${row.store}]`, value: row.requestsPerSec })),
        'req/s',
      ),
    ),
    section(
      'T4 one-second wait',
      'N polls answered by one send 1 s after they start: a non-blocking server answers each in about 1 s.',
      lineChart(t4, 'waiting clients', 'mean ms per request'),
    ),
    section(
      'T5 fan-out over N',
      "N clients each hold one poll, then one send; the time from the send to each client's complete answer. Target: p99 ≤ 250 ms at N = 10,000, ≤ 10 KB per waiting client.",
      '<h3>p99</h3>' +
        lineChart(
          fanoutSeries((row) => row.latency.p99),
          'waiting clients N',
          'p99 ms',
        ) +
        '<h3>Server memory per waiting client: JS heap, after a full GC</h3>' +
        lineChart(
          fanoutSeries((row) => row.heapBytesPerClient / 1024),
          'waiting clients N',
          'KB per client',
        ) +
        '<h3>Server memory per waiting client: resident (RSS)</h3>' +
        lineChart(
          fanoutSeries((row) => row.bytesPerClient / 1024),
          'waiting clients N',
          'KB per client',
        ) +
        `<h3>Distribution at the largest N</h3><div class="row">${largest.map(([name, row], i) => `<figure>${histogramChart(row.histogram.edges, row.histogram.counts, 'ms', colour(i))}<figcaption>${escapeHtml(name)}, N=${row.clients}</figcaption></figure>`).join('')}</div>`,
    ),
    section(
      'T6 sustained delivery',
      'Subscribers re-poll with their cursor while 4 senders send numbered messages. Target: ≥ 50,000 delivered messages/s with none lost. The naive chat has no cursor: what arrives between two of its polls is lost.',
      barChart(
        r.t6.map((row) => ({
          label: row.label,
          value: row.deliveredPerSec,
          note: `(lost ${row.lost} of ${row.expected})`,
        })),
        'msg/s',
      ),
    ),
    section(
      'T7 CPU-bound handler',
      'A route that burns 50 ms of CPU, mixed with <code>/time</code>: one busy request blocks the event loop for everyone; a second worker takes half the load.',
      r.t7.some((row) => row.available)
        ? barChart(
            r.t7
              .filter((row) => row.available)
              .map((row) => ({ label: `WORKERS=${row.workers} /time p99`, value: row.timeP99! })),
            'ms',
          )
        : '<p>Cluster mode not available in this build.</p>',
    ),
    section(
      'Cluster: fan-out over the workers (issue 4)',
      'Polls spread over the workers by the kernel; the load generator competes for the same two cores (its CPU share is in the table).',
      clusterRows.length > 0
        ? barChart(
            clusterRows.map((row) => ({
              label: `WORKERS=${row.workers} fan-out p99`,
              value: row.fanout!.latency.p99,
            })),
            'ms',
          ) +
            barChart(
              clusterRows.map((row) => ({
                label: `WORKERS=${row.workers} delivered`,
                value: row.sustained!.deliveredPerSec,
              })),
              'msg/s',
            )
        : '<p>Cluster mode not available in this build.</p>',
    ),
  ];

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Long-Poll Chat bench ${escapeHtml(r.date)}</title>
<style>
body{font:14px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em}
svg{font:12px system-ui,sans-serif;max-width:100%;height:auto}.axis{fill:#666;font-size:11px}
.row{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}figcaption{text-align:center;color:#555}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}.fail{color:#b91c1c}
</style></head><body>
<h1>Long-Poll Chat benchmarks</h1>
<p>${r.quick ? '<strong>Quick run</strong>: sizes cut down, figures not comparable. ' : ''}${escapeHtml(r.date)}: ${r.machine.cpus} × ${escapeHtml(r.machine.cpuModel)}, Node ${escapeHtml(r.machine.node)}, load average ${escapeHtml(r.machine.loadAverage.join(' '))}, open-file limit ${r.machine.openFileLimit.server}.</p>
${r.failures.length > 0 ? `<ul class="fail">${r.failures.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>` : ''}
${sections.join('\n')}
<h2>All figures</h2><pre>${escapeHtml(renderTable(r))}</pre>
</body></html>
`;
}
