/** Types of build-if-stale.mjs, for the TypeScript that imports it (the tests). */
export type BuildState = 'missing' | 'stale' | 'fresh';
export function buildState(root?: string): { state: BuildState };
export function buildIfStale(options?: { root?: string; log?: (line: string) => void }): boolean;
