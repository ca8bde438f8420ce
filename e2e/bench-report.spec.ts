/**
 * The bench report (bench/report/) as a browser draws it: every label of
 * every chart is measured in Chromium, with the fonts it really has, and
 * must lie inside its chart and clear of every other label. A report whose
 * labels are cut off at the chart's edge, or written over each other, fails
 * here whatever the renderer assumed about the width of a character.
 */
import { readFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import type { Results } from '../bench/lib/context.ts';
import { renderHtml } from '../bench/report/html.ts';

const sample = (): Results =>
  JSON.parse(
    readFileSync(new URL('../test/bench/fixtures/full-run.json', import.meta.url), 'utf8'),
  ) as Results;

/** The fixture with names longer than any of ours, in the bars and in a legend. */
function longNames(): Results {
  const run = sample();
  const long = 'a server with a much longer name than any of ours (SQLite on a slow disk)';
  run.t3 = run.t3.map((row, i) => (i === 0 ? { ...row, label: long } : row));
  run.t2 = run.t2.map((row, i) =>
    i === 0 ? { ...row, label: long, store: 'mysql, remote' } : row,
  );
  run.t4 = run.t4.map((row, i) => (i === 0 ? { ...row, label: long } : row));
  return run;
}

interface Misfit {
  chart: string;
  text: string;
  problem: string;
}

/** Every text of every chart that leaves its chart or overlaps another text of it. */
async function misfits(page: Page): Promise<{ charts: number; texts: number; misfits: Misfit[] }> {
  return page.evaluate(() => {
    const found: Misfit[] = [];
    const charts = [...document.querySelectorAll('svg')];
    let texts = 0;
    const slack = 0.5;
    for (const svg of charts) {
      const chart = svg.getAttribute('aria-label') ?? '(unnamed)';
      const box = svg.getBoundingClientRect();
      const labels = [...svg.querySelectorAll('text')].map((el) => ({
        text: el.textContent ?? '',
        rect: el.getBoundingClientRect(),
      }));
      texts += labels.length;
      for (const { text, rect } of labels) {
        if (
          rect.left < box.left - slack ||
          rect.right > box.right + slack ||
          rect.top < box.top - slack ||
          rect.bottom > box.bottom + slack
        ) {
          found.push({ chart, text, problem: 'runs past the edge of its chart' });
        }
      }
      for (let i = 0; i < labels.length; i += 1) {
        for (let j = i + 1; j < labels.length; j += 1) {
          const a = labels[i]!.rect;
          const b = labels[j]!.rect;
          const overlap =
            Math.min(a.right, b.right) - Math.max(a.left, b.left) > slack &&
            Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > slack;
          if (overlap) {
            found.push({ chart, text: labels[i]!.text, problem: `overlaps "${labels[j]!.text}"` });
          }
        }
      }
    }
    return { charts: charts.length, texts, misfits: found };
  });
}

for (const [name, run] of [
  ['the sample run', sample],
  ['a run with long server names', longNames],
] as const) {
  test.describe(`the bench report of ${name}`, () => {
    test('every label fits inside its chart, clear of the others', async ({ page }) => {
      await page.setContent(renderHtml(run()));
      const measured = await misfits(page);
      expect(measured.charts).toBeGreaterThanOrEqual(10);
      expect(measured.texts).toBeGreaterThan(100);
      expect(measured.misfits).toEqual([]);
    });

    test('every chart has an accessible name', async ({ page }) => {
      await page.setContent(renderHtml(run()));
      const charts = await page.locator('svg').count();
      const images = page.getByRole('img');
      await expect(images).toHaveCount(charts);
      for (const image of await images.all()) {
        await expect(image).toHaveAccessibleName(/\S/);
      }
    });
  });
}

test('a long bar label is drawn whole, from the left edge of its chart', async ({ page }) => {
  const run = longNames();
  await page.setContent(renderHtml(run));
  const label = page.locator('svg[aria-label^="T3 "] tspan.label').first();
  await expect(label).toHaveText(`${run.t3[0]!.label} [${run.t3[0]!.store}]`);
  const [text, chart] = await Promise.all([
    label.boundingBox(),
    page.locator('svg[aria-label^="T3 "]').boundingBox(),
  ]);
  expect(text!.x).toBeGreaterThanOrEqual(chart!.x - 0.5);
  expect(text!.x + text!.width).toBeLessThanOrEqual(chart!.x + chart!.width + 0.5);
});
