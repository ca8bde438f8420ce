/** scripts/guide-blocks.ts: how `npm run check:guide` reads the guide's promises. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { guideBlocks, parseCheck, unmet } from '../../scripts/guide-blocks.ts';

const guide = (...lines: string[]) => lines.join('\n');

describe('guideBlocks', () => {
  it('should read each bash block with the checks under it', () => {
    const blocks = guideBlocks(
      guide(
        'Start it:',
        '```bash',
        'PORT=3001 npm run example:naive',
        '```',
        '<!-- check: starts /naive chat on/ -->',
        '',
        '```bash',
        'curl -s -m 3 $N/recv; echo "exit $?"',
        '```',
        '<!-- check: prints /^exit 28$/m -->',
        '<!-- check: takes 3 to 6 s -->',
        '```ts',
        'not a command',
        '```',
      ),
    );
    expect(blocks).toEqual([
      {
        line: 2,
        script: 'PORT=3001 npm run example:naive',
        checks: [{ kind: 'starts', ready: /naive chat on/ }],
      },
      {
        line: 7,
        script: 'curl -s -m 3 $N/recv; echo "exit $?"',
        checks: [
          { kind: 'prints', pattern: /^exit 28$/m },
          { kind: 'takes', minSeconds: 3, maxSeconds: 6 },
        ],
      },
    ]);
  });

  it('should give a block without checks none, for the runner to refuse', () => {
    expect(guideBlocks(guide('```bash', 'ls', '```', 'prose'))[0]!.checks).toEqual([]);
  });

  it('should refuse a check it cannot read, with its line', () => {
    expect(() => guideBlocks(guide('```bash', 'ls', '```', '<!-- check: looks fine -->'))).toThrow(
      /line 4: cannot read the check "looks fine"/,
    );
  });
});

describe('parseCheck', () => {
  it('should read a lower bound on a captured number', () => {
    expect(parseCheck('prints /"waiting":(\\d+)/ at least 20')).toEqual({
      kind: 'prints',
      pattern: /"waiting":(\d+)/,
      atLeast: 20,
    });
  });

  it('should read a skip and its reason', () => {
    expect(parseCheck('skip, the check picks its ports')).toEqual({
      kind: 'skip',
      reason: 'the check picks its ports',
    });
  });
});

describe('unmet', () => {
  const checks = [
    parseCheck('prints /"waiting":(\\d+)/ at least 20'),
    parseCheck('takes 4.5 to 8 s'),
  ];

  it('should find nothing when the output and the time are as promised', () => {
    expect(unmet(checks, '{"waiting":22}', 5)).toEqual([]);
  });

  it('should say what differs', () => {
    expect(unmet(checks, '{"waiting":3}', 0.2)).toEqual([
      'prints "waiting":3, where 3 should be at least 20',
      'took 0.2 s, not 4.5 to 8 s',
    ]);
    expect(unmet(checks, 'curl: (7) Failed to connect', 5)).toEqual([
      'does not print /"waiting":(\\d+)/',
    ]);
  });
});

describe('docs/long-polling.md', () => {
  it('should say what every command block prints, or why it is not run', () => {
    const blocks = guideBlocks(readFileSync('docs/long-polling.md', 'utf8'));
    expect(blocks.length).toBeGreaterThan(10);
    expect(blocks.filter((block) => block.checks.length === 0).map((block) => block.line)).toEqual(
      [],
    );
  });
});
