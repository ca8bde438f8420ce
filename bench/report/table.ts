/** The results as plain-text tables for the terminal: the targets first, then each test. */
import type { Results } from '../lib/context.ts';
import { judgeTargets, verdictMark } from './targets.ts';

/** A titled table; the first `left` columns are aligned left (names), the rest right (figures). */
function table(title: string, head: string[], rows: (string | number)[][], left = 1): string {
  if (rows.length === 0) return '';
  const cells = [head, ...rows.map((row) => row.map(String))];
  const widths = head.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i < left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ');
  return [
    title,
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
    '',
  ].join('\n');
}

const pct = (share: number | undefined) =>
  share === undefined ? '' : `${Math.round(share * 100)}%`;
const kb = (bytes: number) => (bytes / 1024).toFixed(1);

export function renderTable(r: Results): string {
  const m = r.machine;
  return [
    `${r.quick ? 'QUICK run (sizes cut down; figures are not comparable)' : 'Full run'}, ${r.date}`,
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, Node ${m.node}, load ${m.loadAverage.join(' ')}, open files: server ${m.openFileLimit.server}, generator ${m.openFileLimit.generator}, rate tool ${m.rateTool}`,
    '',
    table(
      'Targets',
      ['test', 'target', 'measured', 'verdict'],
      judgeTargets(r).map((t) => [t.test, t.target, t.measured || '–', verdictMark[t.verdict]]),
      4,
    ),
    table(
      'T1 GET /time',
      ['server', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'failed'],
      r.t1.map((x) => [x.label, x.requestsPerSec, x.p50, x.p99, x.cpuUsPerRequest ?? '', x.failed]),
    ),
    table(
      'T2 GET /history',
      ['server', 'store', 'req/s', 'p50 ms', 'p99 ms', 'failed'],
      r.t2.map((x) => [x.label, x.store, x.requestsPerSec, x.p50, x.p99, x.failed]),
    ),
    table(
      'T3 POST /send',
      ['server', 'store', 'req/s', 'p50 ms', 'p99 ms', 'failed'],
      r.t3.map((x) => [x.label, x.store, x.requestsPerSec, x.p50, x.p99, x.failed]),
    ),
    table(
      'T4 1-second wait',
      ['server', 'clients', 'mean ms', 'max ms', 'answered'],
      r.t4.map((x) => [x.label, x.clients, x.meanMs, x.maxMs, x.answered]),
    ),
    table(
      'T5 fan-out (send → each client has its whole answer)',
      [
        'server',
        'N',
        'p50 ms',
        'p99 ms',
        'max ms',
        'answered',
        'RSS KB/client',
        'heap KB/client',
        'CPU µs/poll',
        'CPU µs/delivery',
        'gen CPU',
      ],
      r.t5.map((x) => [
        x.label,
        x.clients,
        x.latency.p50,
        x.latency.p99,
        x.latency.max,
        x.answered,
        kb(x.bytesPerClient),
        kb(x.heapBytesPerClient),
        x.serverCpuUs.perPoll,
        x.serverCpuUs.perDelivery,
        pct(x.generatorCpuShare),
      ]),
    ),
    table(
      'T6 sustained delivery',
      [
        'server',
        'subs',
        'msgs',
        'delivered/s',
        'sends/s',
        'lost',
        'doubled',
        'reordered',
        'subs missing some',
        'gen CPU',
      ],
      r.t6.map((x) => [
        x.label,
        x.subscribers,
        x.messages,
        x.deliveredPerSec,
        x.sendsPerSec,
        x.lost,
        x.doubled,
        x.outOfOrder,
        x.subscribersMissingSome,
        pct(x.generatorCpuShare),
      ]),
    ),
    table(
      'T7 CPU-bound /burn (50 ms) mixed with /time',
      ['workers', '/time req/s', '/time p50 ms', '/time p99 ms', '/burn req/s', 'gen CPU'],
      r.t7.map((x) =>
        x.available
          ? [
              x.workers,
              x.timePerSec!,
              x.timeP50!,
              x.timeP99!,
              x.burnPerSec!,
              pct(x.generatorCpuShare),
            ]
          : [x.workers, 'cluster mode not available', '', '', '', ''],
      ),
    ),
    table(
      'Cluster: fan-out over the workers, sustained delivery',
      ['workers', 'N', 'fan-out p99 ms', 'answered', 'gen CPU', 'delivered/s', 'lost', 'gen CPU '],
      r.cluster.map((x) =>
        x.available
          ? [
              x.workers,
              x.fanout!.clients,
              x.fanout!.latency.p99,
              x.fanout!.answered,
              pct(x.fanout!.generatorCpuShare),
              x.sustained!.deliveredPerSec,
              x.sustained!.lost,
              pct(x.sustained!.generatorCpuShare),
            ]
          : [x.workers, 'cluster mode not available', '', '', '', '', '', ''],
      ),
    ),
    ...r.notes.map((note) => `note: ${note}`),
  ]
    .filter((part) => part !== '')
    .join('\n');
}
