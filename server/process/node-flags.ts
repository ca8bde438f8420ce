/**
 * The Node flags the chat runs under, one list for every way it starts:
 * `npm start` (package.json), the Dockerfile's command, the systemd unit,
 * the IIS web.configs, and the cluster workers (`cluster.ts` adds any the
 * primary was started without). `test/deploy/node-flags.test.ts` checks
 * each of those files carries exactly these.
 *
 * `--max-semi-space-size=4`: V8's young generation at most 4 MB a half.
 * Node 26's V8 lets it grow to 32 MB a half (64 MB in all) under a burst of
 * allocation, such as thousands of polls arriving, and keeps it committed:
 * at 10,000 waiting polls that was about a third of the chat's memory per
 * poll. The trade-off: a smaller young generation is collected more often,
 * and objects that live a little longer get promoted to the old
 * generation, and a burst of thousands of answers is scavenged several
 * times on its way out; docs/design.md, "Memory per waiting poll", says
 * what that costs.
 */
export const nodeFlags: readonly string[] = Object.freeze(['--max-semi-space-size=4']);

/** `execArgv` with every flag of `nodeFlags` it lacks appended (one it sets itself wins). */
export function withNodeFlags(execArgv: readonly string[]): string[] {
  const name = (flag: string) => flag.split('=')[0];
  const given = new Set(execArgv.map(name));
  return [...execArgv, ...nodeFlags.filter((flag) => !given.has(name(flag)))];
}
