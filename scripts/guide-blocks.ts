/**
 * The guide's command blocks and what each promises, read from
 * docs/long-polling.md for `npm run check:guide` (scripts/check-guide.ts).
 *
 * Each ```bash block is followed by one or more HTML comments (invisible
 * when the guide is rendered) that say what running it must show:
 *
 *   <!-- check: starts /regex/ -->         a server: runs on, ready once its output matches
 *   <!-- check: prints /regex/flags -->    its output (stdout and stderr) matches
 *   <!-- check: prints /a(\d+)b/ at least 20 -->   …and the first group is a number ≥ 20
 *   <!-- check: takes 4.5 to 8 s -->       it ends within that time
 *   <!-- check: skip, why -->              not run, for the reason given
 *
 * A block with no check is an error: every command the guide shows is run.
 */

export type Check =
  | { kind: 'starts'; ready: RegExp }
  | { kind: 'prints'; pattern: RegExp; atLeast?: number }
  | { kind: 'takes'; minSeconds: number; maxSeconds: number }
  | { kind: 'skip'; reason: string };

export interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  script: string;
  checks: Check[];
}

const CHECK = /^<!--\s*check:\s*(.*?)\s*-->$/;

export function parseCheck(text: string): Check {
  let match = /^starts \/(.+)\/([a-z]*)$/.exec(text);
  if (match) return { kind: 'starts', ready: new RegExp(match[1]!, match[2]) };
  match = /^prints \/(.+)\/([a-z]*)(?: at least (\d+))?$/.exec(text);
  if (match) {
    const pattern = new RegExp(match[1]!, match[2]);
    return match[3] === undefined
      ? { kind: 'prints', pattern }
      : { kind: 'prints', pattern, atLeast: Number(match[3]) };
  }
  match = /^takes (\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) s$/.exec(text);
  if (match) return { kind: 'takes', minSeconds: Number(match[1]), maxSeconds: Number(match[2]) };
  match = /^skip,\s*(.+)$/.exec(text);
  if (match) return { kind: 'skip', reason: match[1]! };
  throw new Error(`cannot read the check "${text}"`);
}

/** Every ```bash block of the Markdown text, with its checks. Throws on a check it cannot read. */
export function guideBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (!/^```bash\s*$/.test(lines[i]!)) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]!); i += 1) body.push(lines[i]!);
    const checks: Check[] = [];
    for (let j = i + 1; j < lines.length; j += 1) {
      const comment = CHECK.exec(lines[j]!.trim());
      if (!comment) break;
      try {
        checks.push(parseCheck(comment[1]!));
      } catch (error) {
        throw new Error(`line ${j + 1}: ${(error as Error).message}`);
      }
    }
    blocks.push({ line: start + 1, script: body.join('\n'), checks });
  }
  return blocks;
}

/** What is wrong with a finished command's output and duration, or nothing. */
export function unmet(checks: Check[], output: string, seconds: number): string[] {
  const problems: string[] = [];
  for (const check of checks) {
    if (check.kind === 'prints') {
      const match = check.pattern.exec(output);
      if (!match) problems.push(`does not print ${check.pattern}`);
      else if (check.atLeast !== undefined && !(Number(match[1]) >= check.atLeast)) {
        problems.push(`prints ${match[0]}, where ${match[1]} should be at least ${check.atLeast}`);
      }
    } else if (check.kind === 'takes') {
      if (seconds < check.minSeconds || seconds > check.maxSeconds) {
        problems.push(
          `took ${seconds.toFixed(1)} s, not ${check.minSeconds} to ${check.maxSeconds} s`,
        );
      }
    }
  }
  return problems;
}
