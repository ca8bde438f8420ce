/** What every bench test is handed, and the shape of the results file. */
import type { Summary } from './stats.ts';

export interface Sizes {
  /** `rounds`: the chat and bare Express alternate, and the median of the rounds is reported. */
  t1: { requests: number; concurrency: number; rounds: number };
  t2: { requests: number; concurrency: number };
  t3: { requests: number; concurrency: number };
  t4: number[];
  t5: number[];
  /**
   * `rounds`: the chat and the baseline run back to back this many times;
   * medians are reported. `warmups`: full-size runs of each before, not measured.
   */
  t6: { subscribers: number; senders: number; messages: number; rounds: number; warmups: number };
  t7: { durationMs: number; burnConns: number; timeConns: number };
  cluster: { clients: number; messages: number };
}

export const FULL: Sizes = {
  t1: { requests: 100_000, concurrency: 100, rounds: 3 },
  t2: { requests: 20_000, concurrency: 50 },
  t3: { requests: 5_000, concurrency: 50 },
  t4: [10, 100, 1_000],
  t5: [1_000, 5_000, 10_000],
  t6: { subscribers: 100, senders: 4, messages: 2_000, rounds: 3, warmups: 3 },
  t7: { durationMs: 8_000, burnConns: 2, timeConns: 8 },
  cluster: { clients: 10_000, messages: 2_000 },
};

export const QUICK: Sizes = {
  t1: { requests: 1_000, concurrency: 10, rounds: 3 },
  t2: { requests: 500, concurrency: 10 },
  t3: { requests: 200, concurrency: 10 },
  t4: [10],
  t5: [200, 1_000],
  t6: { subscribers: 10, senders: 4, messages: 100, rounds: 1, warmups: 1 },
  t7: { durationMs: 1_000, burnConns: 2, timeConns: 4 },
  cluster: { clients: 300, messages: 100 },
};

export interface RateRow {
  server: string;
  label: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  percentiles: Record<string, number>;
  failed: number;
  /** Server CPU per request (T1), from /proc. */
  cpuUsPerRequest?: number;
  /** T1's alternating rounds: which round this run was (1-based). */
  round?: number;
}

/**
 * T1's headline: the chat's `/time` against bare Express, each round the two
 * run back to back (chat first, then Express), so a busy machine slows both alike.
 */
export interface TimeRatio {
  rounds: number;
  /** chat req/s ÷ bare Express req/s, per round. */
  perRound: number[];
  /** The median of `perRound`: the figure to hold against the 0.9× goal. */
  median: number;
  /** Median req/s of each, over the rounds. */
  chatPerSec: number;
  expressPerSec: number;
  /** chat CPU per request ÷ Express's, per round, and the median: steadier than req/s on a busy machine. */
  cpuPerRound: number[];
  cpuMedian: number;
}

export interface WaitRow {
  server: string;
  label: string;
  clients: number;
  meanMs: number;
  maxMs: number;
  answered: number;
}

export interface FanoutRow {
  server: string;
  label: string;
  clients: number;
  latency: Summary;
  histogram: { edges: number[]; counts: number[] };
  answered: number;
  failed: number;
  /** Server resident memory per waiting client (RSS after a full GC, armed minus before). */
  bytesPerClient: number;
  /** JS heap in use per waiting client, after a full GC: what the JS objects of a poll hold. */
  heapBytesPerClient: number;
  /** Server CPU per client: taking the poll (connect, parse, route, wait), and answering it (including the close). */
  serverCpuUs: { perPoll: number; perDelivery: number };
  armMs: number;
  generatorCpuShare: number;
}

export interface SustainedRow {
  server: string;
  label: string;
  subscribers: number;
  messages: number;
  deliveredPerSec: number;
  sendsPerSec: number;
  delivered: number;
  expected: number;
  /** Sends not answered 200 (left out of older results). */
  sendErrors?: number;
  /** The first few things that went wrong, in words (bench/load/generator.ts). */
  incidents?: string[];
  lost: number;
  doubled: number;
  outOfOrder: number;
  subscribersMissingSome: number;
  generatorCpuShare: number;
  /** From the first send to the last delivery (the span `deliveredPerSec` is counted over). */
  elapsedMs?: number;
  /** Server CPU (user + system, every process of the server) over that span, per delivery. */
  serverCpuUsPerDelivery?: number;
  /**
   * Of `serverCpuUsPerDelivery`, what the main (JavaScript) threads spent; the
   * rest is V8's helper threads (garbage collection, compilation: high while
   * V8 still compiles the hot paths) and libuv's pool.
   */
  mainThreadCpuUsPerDelivery?: number;
  /** Poll answers that carried messages: a server that batches more messages per answer writes fewer responses. */
  answers?: number;
  /** Deliveries ÷ answers. */
  messagesPerAnswer?: number;
  /** Server CPU per HTTP exchange over the span: (answers + sends) ÷ CPU, what each request/response costs. */
  serverCpuUsPerRequest?: number;
  /** Server CPU over that span as a share of one core: below 1 on a busy machine, the server waited for a core. */
  serverCpuShare?: number;
  /** The machine's 1-minute load average when the run ended: how busy the shared cores were. */
  loadAverage1m?: number;
  /** Which of T6's back-to-back rounds this run was (1-based); absent outside the rounds. */
  round?: number;
  /**
   * deliveredPerSec ÷ the baseline's (the in-memory node:http cursor server).
   * In `t6Rounds`: against the baseline's run of the same round. In `t6`: the
   * median of the per-round ratios (for servers outside the rounds: against
   * the baseline's median).
   */
  ratioToBaseline?: number;
  /** serverCpuUsPerDelivery ÷ the baseline's, paired like `ratioToBaseline`: above 1 costs more. */
  cpuRatioToBaseline?: number;
}

export interface CpuBoundRow {
  workers: number;
  available: boolean;
  timePerSec?: number;
  timeP50?: number;
  timeP99?: number;
  burnPerSec?: number;
  generatorCpuShare?: number;
}

export interface ClusterRow {
  workers: number;
  available: boolean;
  fanout?: FanoutRow;
  sustained?: SustainedRow;
}

export interface Results {
  date: string;
  quick: boolean;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    node: string;
    /** The commit the run measured (`git describe --always --dirty`); absent in runs before it was recorded. */
    commit?: string;
    loadAverage: number[];
    openFileLimit: { server: number; generator: number };
    rateTool: string;
  };
  /** One row per server; the chat's and bare Express's are their median round. */
  t1: RateRow[];
  /** Every run of T1's alternating rounds (chat, Express, chat, Express, …). */
  t1Rounds?: RateRow[];
  t1Ratio?: TimeRatio;
  t2: (RateRow & { store: string })[];
  t3: (RateRow & { store: string })[];
  t4: WaitRow[];
  t5: FanoutRow[];
  /**
   * One row per server. For the chat and the baseline: their median round by
   * deliveredPerSec, with the median ratios, and lost/doubled/outOfOrder summed
   * over every round (so a loss in any round shows).
   */
  t6: SustainedRow[];
  /** Every run of T6's back-to-back rounds, chat and baseline alternating who goes first. */
  t6Rounds?: SustainedRow[];
  t7: CpuBoundRow[];
  cluster: ClusterRow[];
  notes: string[];
  failures: string[];
}

export function emptyResults(quick: boolean): Results {
  return {
    date: new Date().toISOString(),
    quick,
    machine: {
      cpus: 0,
      cpuModel: '',
      memoryGb: 0,
      node: process.version,
      loadAverage: [],
      openFileLimit: { server: 0, generator: 0 },
      rateTool: '',
    },
    t1: [],
    t2: [],
    t3: [],
    t4: [],
    t5: [],
    t6: [],
    t6Rounds: [],
    t1Rounds: [],
    t7: [],
    cluster: [],
    notes: [],
    failures: [],
  };
}

export const progress = (line: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};
