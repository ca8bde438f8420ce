/**
 * The bench's targets, each judged met or missed from a run's results, for
 * the report and the terminal table. The figures are those the project set
 * for the chat on this 2-core machine: about what the best C long-poll
 * server (nginx with Nchan) reaches here.
 *
 * A quick run (`--quick`) is never judged: its sizes are cut down (no
 * N = 10,000, a few dozen messages) and its figures mean nothing against a
 * target. A target whose test did not run is "not measured".
 */
import type { Results } from '../lib/context.ts';

export type Verdict = 'met' | 'missed' | 'not measured' | 'not judged';

export interface Judged {
  /** Which test it belongs to: `T1`, `T5`, `T6`. */
  test: string;
  target: string;
  measured: string;
  verdict: Verdict;
}

const FANOUT_CLIENTS = 10_000;
const FANOUT_P99_MS = 250;
const MEMORY_KB_PER_CLIENT = 10;
const SUSTAINED_PER_SEC = 50_000;
const TIME_VS_EXPRESS = 0.9;

const number = (value: number) => Math.round(value).toLocaleString('en');

export function judgeTargets(r: Results): Judged[] {
  const judged: Judged[] = [];
  const judge = (test: string, target: string, figure: (() => [string, boolean]) | undefined) => {
    if (!figure) {
      judged.push({ test, target, measured: '', verdict: 'not measured' });
      return;
    }
    const [measured, met] = figure();
    judged.push({
      test,
      target,
      measured,
      verdict: r.quick ? 'not judged' : met ? 'met' : 'missed',
    });
  };

  const chatTime = r.t1.find((row) => row.server === 'chat');
  const express = r.t1.find((row) => row.server === 'bare-express');
  judge(
    'T1',
    `GET /time at ≥ ${TIME_VS_EXPRESS}× bare Express`,
    chatTime && express
      ? () => {
          // Judged on the median of the per-round ratios (alternating
          // rounds, bench/scenarios/rates.ts), as the T1 line prints it; a run
          // saved before there were rounds has one ratio.
          const rounds = r.t1Ratio;
          if (rounds) {
            return [
              `${rounds.median.toFixed(2)}×, median of ${rounds.rounds} rounds (${rounds.perRound.map((x) => `${x.toFixed(2)}×`).join(', ')})`,
              rounds.median >= TIME_VS_EXPRESS,
            ];
          }
          const ratio = chatTime.requestsPerSec / express.requestsPerSec;
          return [
            `${ratio.toFixed(2)}× (${number(chatTime.requestsPerSec)} vs ${number(express.requestsPerSec)} req/s)`,
            ratio >= TIME_VS_EXPRESS,
          ];
        }
      : undefined,
  );

  const fanout = r.t5.find((row) => row.server === 'chat' && row.clients === FANOUT_CLIENTS);
  judge(
    'T5',
    `fan-out p99 ≤ ${FANOUT_P99_MS} ms at N = ${number(FANOUT_CLIENTS)}`,
    fanout ? () => [`${fanout.latency.p99} ms`, fanout.latency.p99 <= FANOUT_P99_MS] : undefined,
  );
  judge(
    'T5',
    `≤ ${MEMORY_KB_PER_CLIENT} KB of server memory (RSS) per waiting client at N = ${number(FANOUT_CLIENTS)}`,
    fanout
      ? () => {
          const kb = fanout.bytesPerClient / 1024;
          const heap = fanout.heapBytesPerClient / 1024;
          return [
            `${kb.toFixed(1)} KB (JS heap ${heap.toFixed(1)} KB)`,
            kb <= MEMORY_KB_PER_CLIENT,
          ];
        }
      : undefined,
  );

  const sustained = r.t6.find((row) => row.server === 'chat');
  judge(
    'T6',
    `≥ ${number(SUSTAINED_PER_SEC)} delivered messages/s, none lost, doubled or reordered`,
    sustained
      ? () => {
          const faults = sustained.lost + sustained.doubled + sustained.outOfOrder;
          return [
            `${number(sustained.deliveredPerSec)} msg/s, ${sustained.lost} lost, ${sustained.doubled} doubled, ${sustained.outOfOrder} reordered`,
            sustained.deliveredPerSec >= SUSTAINED_PER_SEC && faults === 0,
          ];
        }
      : undefined,
  );
  return judged;
}

export const verdictMark: Record<Verdict, string> = {
  met: '✓ met',
  missed: '✗ missed',
  'not measured': '– not measured',
  'not judged': '– not judged (quick run)',
};
