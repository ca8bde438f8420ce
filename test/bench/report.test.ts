/**
 * The bench report (bench/report/), rendered from a full run kept as a
 * fixture (test/bench/fixtures/full-run.json, an earlier bench/results/sample.json,
 * so the sample can be refreshed without touching the tests) and from variations of it: targets judged,
 * one colour per server, bars for a single N, shared histogram axes, quick
 * runs marked, no internal references in headings.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Results } from '../../bench/lib/context.ts';
import { serverColour } from '../../bench/report/colours.ts';
import { renderHtml } from '../../bench/report/html.ts';
import { renderTable } from '../../bench/report/table.ts';
import { judgeTargets } from '../../bench/report/targets.ts';

const sample = (): Results =>
  JSON.parse(readFileSync(new URL('fixtures/full-run.json', import.meta.url), 'utf8')) as Results;

/** The HTML of one `<section>`, found by the start of its heading. */
function section(html: string, heading: string): string {
  const start = html.indexOf(`<section><h2>${heading}`);
  expect(start, `a section "${heading}"`).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

describe('judgeTargets', () => {
  describe('on a full run', () => {
    it('should mark each target met or missed from the figures', () => {
      expect(judgeTargets(sample()).map((t) => [t.test, t.verdict, t.measured])).toEqual([
        ['T1', 'missed', '0.86× (3,568 vs 4,157 req/s)'],
        ['T5', 'missed', '341.91 ms'],
        ['T5', 'met', '4.8 KB (JS heap 3.2 KB)'],
        ['T6', 'missed', '35,342 msg/s, 0 lost, 0 doubled, 0 reordered'],
      ]);
    });

    it('should judge /time on the median of the per-round ratios when the run has rounds', () => {
      const run = sample();
      // The median row of each server would give 1.00×; the rounds' ratios give 0.85×.
      run.t1Ratio = {
        rounds: 3,
        perRound: [0.8, 0.85, 1.2],
        median: 0.85,
        chatPerSec: 4_000,
        expressPerSec: 4_000,
        cpuPerRound: [1, 1, 1],
        cpuMedian: 1,
      };
      run.t1 = run.t1.map((row) => ({ ...row, requestsPerSec: 4_000 }));
      expect(judgeTargets(run)[0]).toMatchObject({
        verdict: 'missed',
        measured: '0.85×, median of 3 rounds (0.80×, 0.85×, 1.20×)',
      });
    });

    it('should miss the sustained target when a message is lost, however fast', () => {
      const run = sample();
      run.t6[0] = { ...run.t6[0]!, deliveredPerSec: 90_000, lost: 1 };
      expect(judgeTargets(run)[3]!.verdict).toBe('missed');
    });

    it('should say "not measured" for a test that did not run', () => {
      const run = sample();
      run.t5 = [];
      expect(
        judgeTargets(run)
          .filter((t) => t.test === 'T5')
          .map((t) => t.verdict),
      ).toEqual(['not measured', 'not measured']);
    });
  });

  describe('on a quick run', () => {
    it('should judge nothing', () => {
      const run = { ...sample(), quick: true };
      expect(new Set(judgeTargets(run).map((t) => t.verdict))).toEqual(new Set(['not judged']));
    });
  });
});

describe('renderHtml', () => {
  it('should draw each server in one colour in every chart', () => {
    const html = renderHtml(sample());
    const colours = new Map<string, Set<string>>();
    const note = (label: string, fill: string) =>
      colours.set(label, (colours.get(label) ?? new Set()).add(fill));
    // Bars: the label, then its bar. Legends: the swatch, then the label. Histograms: the caption.
    for (const [, label, fill] of html.matchAll(
      /<tspan class="label">([^<[]+?)(?: \[[^\]]+\])?<\/tspan>[^<]*<\/text>\n<rect [^>]*fill="(#[0-9a-f]{6})"/g,
    )) {
      note(label!, fill!);
    }
    for (const [, fill, label] of html.matchAll(
      /<rect [^>]*width="12" height="12" fill="(#[0-9a-f]{6})"\/><text [^>]*>([^<]+)<\/text>/g,
    )) {
      note(label!, fill!);
    }
    for (const [, svg, label] of html.matchAll(
      /<figure>(<svg[\s\S]*?<\/svg>)<figcaption>([^<]+?), N=\d+<\/figcaption>/g,
    )) {
      for (const [, fill] of svg!.matchAll(/<rect [^>]*fill="(#[0-9a-f]{6})"/g))
        note(label!, fill!);
    }
    expect(html.match(/<figure>/g)).toHaveLength(3);
    expect(colours.get('naive 2011 chat')).toEqual(new Set([serverColour('naive')]));
    expect(colours.get('chat (SQLite)')).toEqual(new Set([serverColour('chat')]));
    for (const [label, fills] of colours) expect(fills.size, label).toBe(1);
    expect(colours.size).toBeGreaterThanOrEqual(6);
  });

  it('should draw T4 as bars when the run measured one N only, and as lines for several', () => {
    const full = sample();
    expect(section(renderHtml(full), 'T4')).toContain('<path');
    const single = { ...full, t4: full.t4.filter((row) => row.clients === 10) };
    const t4 = section(renderHtml(single), 'T4');
    expect(t4).not.toContain('<path');
    expect(t4).toContain('(N = 10)');
    expect(t4).toContain('mean ms per request, waiting clients N = 10');
  });

  it('should give every chart an accessible name', () => {
    const html = renderHtml(sample());
    const charts = html.match(/<svg[^>]*>/g)!;
    expect(charts.length).toBeGreaterThanOrEqual(10);
    for (const svg of charts) expect(svg).toMatch(/ role="img" aria-label="[^"]+"/);
    const titles = [...html.matchAll(/<svg[^>]*><title>([^<]+)<\/title>/g)].map((m) => m[1]);
    expect(titles).toHaveLength(charts.length);
    expect(titles).toContain('T1 GET /time: latency percentiles in ms, by server');
  });

  it('should name the percentile and the unit in the tooltips, on a log axis', () => {
    const run = sample();
    const t1 = section(renderHtml(run), 'T1');
    const chat = run.t1.find((row) => row.server === 'chat')!;
    expect(t1).toContain(`<title>${chat.label}: p50 → ${chat.percentiles['50']} ms</title>`);
    expect(t1).not.toMatch(/<title>[^<]*: \d+ → /);
    expect(t1).toContain('ms (log scale)');
    const t5 = section(renderHtml(run), 'T5');
    expect(t5).toMatch(/<title>\d+(?:\.\d)?–\d+(?:\.\d)? ms: \d+ clients<\/title>/);
  });

  it('should give the commit, the Node version, the cores and their caveat, read from the run', () => {
    const run = sample();
    run.machine = { ...run.machine, cpus: 5, node: 'v26.10.0', commit: 'abc123def456' };
    const html = renderHtml(run);
    expect(html).toContain('commit <code>abc123def456</code>: 5 cores');
    expect(html).toContain('Node v26.10.0');
    expect(html).toContain('Figures from a machine with 5 cores shared by the server');
    expect(section(html, 'Cluster')).toContain('the same 5 cores');
    expect(html).not.toMatch(/two cores/i);
    delete run.machine.commit;
    expect(renderHtml(run)).toContain('commit <code>not recorded</code>');
  });

  it('should show the notes of the run, such as where the SQLite files were', () => {
    const run = sample();
    run.notes = ['SQLite files on tmpfs (/dev/shm) except the "chat (SQLite on disk)" row of T3.'];
    expect(renderHtml(run)).toContain(
      '<li>SQLite files on tmpfs (/dev/shm) except the &quot;chat (SQLite on disk)&quot; row of T3.</li>',
    );
  });

  it('should give the histograms axis titles and the same axes', () => {
    const t5 = section(renderHtml(sample()), 'T5');
    const histograms = t5.slice(t5.indexOf('Distribution at the largest N'));
    const svgs = histograms.match(/<svg[\s\S]*?<\/svg>/g)!;
    expect(svgs).toHaveLength(3);
    const axes = (svg: string) => [...svg.matchAll(/class="axis">([^<]+)</g)].map((m) => m[1]);
    for (const svg of svgs) {
      expect(svg).toContain('ms from the send to the complete answer');
      expect(svg).toContain('>clients<');
      expect(axes(svg)).toEqual(axes(svgs[0]!));
    }
  });

  it('should show the targets, met or missed, at the top and under their test', () => {
    const html = renderHtml(sample());
    expect(section(html, 'Targets')).toMatch(/fan-out p99 ≤ 250 ms[\s\S]*✗ missed/);
    expect(section(html, 'T5')).toContain('✓ met');
  });

  it('should put no internal references such as "(issue 4)" in headings', () => {
    const html = renderHtml(sample());
    expect(html.match(/<h[1-3]>[^<]*issue[^<]*<\/h[1-3]>/gi)).toBeNull();
    expect(renderTable(sample())).not.toMatch(/issue \d/i);
  });

  describe('on a quick run', () => {
    it('should say in its title, at the top and under every heading that the figures are not comparable', () => {
      const html = renderHtml({ ...sample(), quick: true });
      expect(html).toMatch(/<title>[^<]*quick run, not comparable/);
      const sections = html.match(/<section><h2>T\d[\s\S]*?<\/section>/g)!;
      expect(sections.length).toBe(7);
      for (const part of sections) expect(part).toContain('figures not comparable');
      expect(renderTable({ ...sample(), quick: true })).toMatch(/^QUICK run .*not comparable/);
    });
  });
});
