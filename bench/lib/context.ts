/** What every bench test is handed, and the shape of the results file. */
import type { Summary } from './stats.ts';

export interface Sizes {
  t1: { requests: number; concurrency: number };
  t2: { requests: number; concurrency: number };
  t3: { requests: number; concurrency: number };
  t4: number[];
  t5: number[];
  t6: { subscribers: number; senders: number; messages: number };
  t7: { durationMs: number; burnConns: number; timeConns: number };
  cluster: { clients: number; messages: number };
}

export const FULL: Sizes = {
  t1: { requests: 100_000, concurrency: 100 },
  t2: { requests: 20_000, concurrency: 50 },
  t3: { requests: 5_000, concurrency: 50 },
  t4: [10, 100, 1_000],
  t5: [1_000, 5_000, 10_000],
  t6: { subscribers: 100, senders: 4, messages: 2_000 },
  t7: { durationMs: 8_000, burnConns: 2, timeConns: 8 },
  cluster: { clients: 10_000, messages: 2_000 },
};

export const QUICK: Sizes = {
  t1: { requests: 1_000, concurrency: 10 },
  t2: { requests: 500, concurrency: 10 },
  t3: { requests: 200, concurrency: 10 },
  t4: [10],
  t5: [200, 1_000],
  t6: { subscribers: 10, senders: 4, messages: 100 },
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
  lost: number;
  doubled: number;
  outOfOrder: number;
  subscribersMissingSome: number;
  generatorCpuShare: number;
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
    loadAverage: number[];
    openFileLimit: { server: number; generator: number };
    rateTool: string;
  };
  t1: RateRow[];
  t2: (RateRow & { store: string })[];
  t3: (RateRow & { store: string })[];
  t4: WaitRow[];
  t5: FanoutRow[];
  t6: SustainedRow[];
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
    t7: [],
    cluster: [],
    notes: [],
    failures: [],
  };
}

export const progress = (line: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};
