/**
 * Reads a V8 `.cpuprofile` (what `node --cpu-prof` writes) into figures that
 * fit in a note, without DevTools: self time by function (name + file:line),
 * self time by file or package, and total (inclusive) time of the chat's own
 * functions. Lines in `dist/` are mapped back to the TypeScript source through
 * the build's source maps, so an entry names `server/http/recv.ts:142`.
 *
 * Samples can be limited to a window on the profile's clock (microseconds of
 * the monotonic clock, the one `process.hrtime` reads on Linux), so the
 * server's start-up and the warm-up stay out of the figures.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Entry {
  /** Function name, or V8's `(idle)`, `(garbage collector)`, `(program)`. */
  name: string;
  /** `file:line` (source-mapped when it can be), or '' for V8's own entries. */
  where: string;
  micros: number;
}

export interface Breakdown {
  /** Microseconds of samples in the window. */
  windowUs: number;
  /** Of which `(idle)`: the process waited for I/O (or for a core, on a busy machine, it does not say). */
  idleUs: number;
  samples: number;
  selfByFunction: Entry[];
  selfByFile: Entry[];
  /** Total time of the functions under `ownCode` (each counted once per sample, however deep it recurses). */
  totalOfOwn: Entry[];
}

export interface BreakdownOptions {
  /** Keep the samples taken in [from, to] (µs on the profile's clock). */
  window?: { from: number; to: number };
  /** The folder the profiled code's relative names start from (the repository). */
  root: string;
  /** Which `where` is the project's own code, for `totalOfOwn`. */
  ownCode?: (where: string) => boolean;
}

/** Source maps of files under `dist/`, read once each. */
const maps = new Map<string, SourceMap | undefined>();

function sourceMapOf(file: string): SourceMap | undefined {
  if (!maps.has(file)) {
    const mapFile = `${file}.map`;
    maps.set(
      file,
      existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : undefined,
    );
  }
  return maps.get(file);
}

/** `file:line` relative to the repository, mapped from `dist/` to the source when a map says. */
function place(frame: CallFrame, root: string): string {
  if (frame.url === '') return '';
  const line = frame.lineNumber + 1;
  if (!frame.url.startsWith('file://')) return `${frame.url}:${line}`;
  const file = fileURLToPath(frame.url);
  const map = sourceMapOf(file);
  const found = map?.findEntry(frame.lineNumber, Math.max(0, frame.columnNumber));
  if (found && 'originalSource' in found && found.originalSource) {
    const source = found.originalSource.startsWith('file://')
      ? fileURLToPath(found.originalSource)
      : new URL(found.originalSource, frame.url).pathname;
    return `${relative(source, root)}:${found.originalLine + 1}`;
  }
  return `${relative(file, root)}:${line}`;
}

function relative(file: string, root: string): string {
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return file.startsWith(prefix) ? file.slice(prefix.length) : file;
}

/**
 * The file or package an entry belongs to: `express`, `node:_http_server`,
 * `server/http/recv.ts`…; V8's own entries stay themselves (`(garbage
 * collector)`), and functions without a script are `(native)` (`writev`: the
 * system call, its time in the kernel included).
 */
export function fileOf(name: string, where: string): string {
  if (where === '') return name.startsWith('(') ? name : '(native)';
  const path = where.replace(/:\d+$/, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  return path;
}

export function breakdown(profile: CpuProfile, options: BreakdownOptions): Breakdown {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const keys = new Map<number, { name: string; where: string; key: string }>();
  for (const node of profile.nodes) {
    const name = node.callFrame.functionName || '(anonymous)';
    const where = place(node.callFrame, options.root);
    keys.set(node.id, { name, where, key: `${name}\u0000${where}` });
  }

  // Sample i lasts until sample i + 1 (DevTools' rule); the last one gets nothing.
  const times: number[] = new Array(profile.samples.length);
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    times[i] = at;
  }
  const self = new Map<string, Entry>();
  const files = new Map<string, Entry>();
  const totals = new Map<string, Entry>();
  let windowUs = 0;
  let idleUs = 0;
  let samples = 0;
  const add = (into: Map<string, Entry>, key: string, name: string, where: string, us: number) => {
    const entry = into.get(key);
    if (entry) entry.micros += us;
    else into.set(key, { name, where, micros: us });
  };
  for (let i = 0; i + 1 < profile.samples.length; i++) {
    const when = times[i]!;
    if (options.window && (when < options.window.from || when > options.window.to)) continue;
    const us = times[i + 1]! - when;
    const id = profile.samples[i]!;
    const { name, where, key } = keys.get(id)!;
    samples += 1;
    windowUs += us;
    if (name === '(idle)') idleUs += us;
    add(self, key, name, where, us);
    const file = fileOf(name, where);
    add(files, file, file, '', us);
    if (options.ownCode) {
      const seen = new Set<string>();
      for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
        const frame = keys.get(node)!;
        if (seen.has(frame.key) || !options.ownCode(frame.where)) continue;
        seen.add(frame.key);
        add(totals, frame.key, frame.name, frame.where, us);
      }
    }
  }
  const sorted = (map: Map<string, Entry>) => [...map.values()].sort((a, b) => b.micros - a.micros);
  return {
    windowUs,
    idleUs,
    samples,
    selfByFunction: sorted(self),
    selfByFile: sorted(files),
    totalOfOwn: sorted(totals),
  };
}

/**
 * The breakdown as text: the top `top` entries of each list, as shares of the
 * busy time and, given the HTTP requests served in the window, µs per request.
 */
export function renderBreakdown(b: Breakdown, top = 25, requests?: number): string {
  const busy = b.windowUs - b.idleUs;
  const pct = (us: number, of: number) => `${((us / of) * 100).toFixed(1).padStart(5)}%`;
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(6)} ms`;
  const per = (us: number) => (requests ? `${(us / requests).toFixed(2).padStart(7)} µs/req` : '');
  const list = (title: string, entries: Entry[], count: number) => [
    title,
    ...entries
      .filter((e) => e.name !== '(idle)')
      .slice(0, count)
      .map(
        (e, i) =>
          `${String(i + 1).padStart(3)}. ${pct(e.micros, busy)}  ${ms(e.micros)}${per(e.micros)}  ${e.name}${e.where ? `  ${e.where}` : ''}`,
      ),
    '',
  ];
  return [
    `${b.samples} samples over ${(b.windowUs / 1e6).toFixed(2)} s: busy ${ms(busy).trim()} (${pct(busy, b.windowUs).trim()}), idle ${pct(b.idleUs, b.windowUs).trim()}` +
      (requests
        ? `; ${requests} HTTP requests, ${(busy / requests).toFixed(1)} µs busy each`
        : '') +
      '. Shares below are of the busy time.',
    '',
    ...list(`Top ${top} by self time (function, source file:line):`, b.selfByFunction, top),
    ...list('Self time by file or package:', b.selfByFile, 20),
    ...(b.totalOfOwn.length > 0
      ? list('Total (inclusive) time of the project’s own functions:', b.totalOfOwn, top)
      : []),
  ].join('\n');
}
