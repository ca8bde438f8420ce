/**
 * What `/proc` tells about a server process and its children (cluster
 * workers): CPU seconds and resident memory. Linux only; elsewhere the
 * figures are reported as unknown (NaN) rather than guessed.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on every Linux architecture Node runs on.

/** `pid` and all its descendants. */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${pids[i]}/task`)) {
        const children = readFileSync(`/proc/${pids[i]}/task/${task}/children`, 'utf8').trim();
        if (children) pids.push(...children.split(' ').map(Number));
      }
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** User + system CPU seconds of the process tree. */
export function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const one of processTree(pid)) {
    try {
      // Fields after the `(comm)`, which may itself hold spaces: utime is the 14th field, stime the 15th.
      const stat = readFileSync(`/proc/${one}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return Number.NaN;
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/**
 * CPU seconds of the main threads only (the thread whose id is its process's
 * id) of the process tree: the JavaScript's thread. The rest of `cpuSeconds`
 * is V8's helper threads (garbage collection, compilation) and libuv's pool.
 */
export function mainThreadCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const one of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${one}/task/${one}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return Number.NaN;
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** Resident memory of the process tree, in bytes. */
export function rssBytes(pid: number): number {
  let total = 0;
  for (const one of processTree(pid)) {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${one}/status`, 'utf8'));
      total += Number(match?.[1] ?? Number.NaN) * 1024;
    } catch {
      return Number.NaN;
    }
  }
  return total;
}

/** The open-file limit this process got (`ulimit -n`), from `/proc/self/limits`. */
export function openFileLimit(pid: number | 'self' = 'self'): number {
  try {
    const match = /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return Number(match?.[1]);
  } catch {
    return Number.NaN;
  }
}
