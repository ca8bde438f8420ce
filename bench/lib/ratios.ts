/**
 * Figures as ratios: T6 against the baseline (the in-memory node:http cursor
 * server, the floor Node's HTTP stack allows) and T1's chat against bare
 * Express, each from rounds run back to back so a busy machine slows both
 * sides alike. The medians here are what the goals are held against
 * (issue 11: sustained delivery ≥ 1.0× the baseline, `/time` ≥ 0.9× Express).
 */
import type { RateRow, Results, SustainedRow } from './context.ts';
import { round } from './stats.ts';

/** The server id of the T6 baseline (`bench/servers/bare-http.ts`). */
export const BASELINE = 'bare-http';

/** The lower median: with an odd count, the middle value. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The row whose `pick` is the (lower) median of the rows'. */
export function medianRow<T>(rows: readonly T[], pick: (row: T) => number): T {
  const sorted = [...rows].sort((a, b) => pick(a) - pick(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * Fills a run's ratios against the baseline's run (same round, or its median
 * row), when both ran the same workload (quick mode's cluster run does not).
 */
export function setRatios(row: SustainedRow, baseline: SustainedRow | undefined): void {
  if (!baseline || baseline.deliveredPerSec <= 0) return;
  if (row.subscribers !== baseline.subscribers || row.messages !== baseline.messages) return;
  row.ratioToBaseline = round(row.deliveredPerSec / baseline.deliveredPerSec);
  const cpu = row.serverCpuUsPerDelivery;
  const baseCpu = baseline.serverCpuUsPerDelivery;
  if (cpu !== undefined && baseCpu !== undefined && baseCpu > 0) {
    row.cpuRatioToBaseline = round(cpu / baseCpu);
  }
}

/**
 * One row per server from T6's rounds: the median round by delivered/s,
 * carrying the median of the per-round ratios, and the losses of every round.
 */
export function summariseRounds(rounds: readonly SustainedRow[]): SustainedRow[] {
  const servers = [...new Set(rounds.map((row) => row.server))];
  return servers.map((server) => {
    const runs = rounds.filter((row) => row.server === server);
    const { round: _round, ...typical } = medianRow(runs, (row) => row.deliveredPerSec);
    const ratios = runs.flatMap((row) => row.ratioToBaseline ?? []);
    const cpuRatios = runs.flatMap((row) => row.cpuRatioToBaseline ?? []);
    const sum = (key: 'lost' | 'doubled' | 'outOfOrder') =>
      runs.reduce((total, row) => total + row[key], 0);
    return {
      ...typical,
      ratioToBaseline: ratios.length > 0 ? median(ratios) : undefined,
      cpuRatioToBaseline: cpuRatios.length > 0 ? median(cpuRatios) : undefined,
      lost: sum('lost'),
      doubled: sum('doubled'),
      outOfOrder: sum('outOfOrder'),
    };
  });
}

/** The baseline's summary row, once T6's rounds have run. */
export function baselineRow(results: Results): SustainedRow | undefined {
  return results.t6.find((row) => row.server === BASELINE);
}

const times = (ratio: number | undefined) => (ratio === undefined ? '' : `${ratio.toFixed(2)}×`);

function lines(title: string, head: string[], rows: (string | number)[][]): string[] {
  const cells = [head, ...rows.map((row) => row.map(String))];
  const widths = head.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ');
  return [
    title,
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
  ];
}

function sustainedCells(row: SustainedRow): (string | number)[] {
  return [
    row.round === undefined ? row.label : `${row.label}, round ${row.round}`,
    row.deliveredPerSec,
    times(row.ratioToBaseline),
    row.serverCpuUsPerDelivery ?? '',
    times(row.cpuRatioToBaseline),
    row.mainThreadCpuUsPerDelivery ?? '',
    row.messagesPerAnswer ?? '',
    row.serverCpuUsPerRequest ?? '',
    row.serverCpuShare === undefined ? '' : `${Math.round(row.serverCpuShare * 100)}%`,
    `${row.lost}/${row.doubled}/${row.outOfOrder}`,
    row.loadAverage1m ?? '',
  ];
}

/**
 * The ratios as text for the terminal, after the report's tables: T6 per
 * round and as medians, and T1's rounds. (The HTML report does not show
 * these yet; the results JSON has them: `t6Rounds`, `t6[].ratioToBaseline`,
 * `t6[].serverCpuUsPerDelivery`, `t1Rounds`, `t1Ratio`.)
 */
/** The caveat of every run: the figures come from cores the server shares with its load. */
export function sharedCores(machine: Pick<Results['machine'], 'cpus' | 'loadAverage'>): string {
  return `Figures from a machine with ${machine.cpus} cores shared by the server, the load generator and anything else running (load average at start ${machine.loadAverage.join(' ')}): compare ratios and CPU per delivery, not absolute rates.`;
}

export function renderRatios(r: Results): string {
  const out: string[] = [];
  const head = [
    'server',
    'delivered/s',
    '× baseline',
    'server CPU µs/delivery',
    '× baseline',
    'of which main thread',
    'msgs/answer',
    'CPU µs/request',
    'server CPU share',
    'lost/doubled/reordered',
    'load 1 min',
  ];
  if (r.t6.length > 0) {
    out.push(
      ...lines(
        'T6 sustained delivery against the baseline (in-memory node:http cursor server); medians of the rounds, other servers against the baseline median',
        head,
        r.t6.map(sustainedCells),
      ),
      '',
    );
  }
  if ((r.t6Rounds ?? []).length > 0) {
    out.push(
      ...lines(
        'T6 rounds (each round: chat and baseline back to back)',
        head,
        r.t6Rounds!.map(sustainedCells),
      ),
      '',
    );
  }
  const t1 = r.t1Ratio;
  if (t1) {
    const rows = (r.t1Rounds ?? []).map((row: RateRow) => [
      `${row.label}, round ${row.round}`,
      row.requestsPerSec,
      row.p99,
      row.cpuUsPerRequest ?? '',
    ]);
    out.push(
      ...lines(
        'T1 GET /time rounds (chat, then bare Express, alternating)',
        ['server', 'req/s', 'p99 ms', 'CPU µs/req'],
        rows,
      ),
      `T1 chat ÷ bare Express: median ${times(t1.median)} over ${t1.rounds} rounds (${t1.perRound.map(times).join(', ')}); median req/s: chat ${t1.chatPerSec}, Express ${t1.expressPerSec}; CPU per request chat ÷ Express: median ${times(t1.cpuMedian)} (${t1.cpuPerRound.map(times).join(', ')})`,
      '',
    );
  }
  if (out.length > 0) out.push(sharedCores(r.machine));
  return out.join('\n');
}
