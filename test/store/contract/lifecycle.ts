/** The store contract, part: ping and close. */
import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context.ts';

export function describeLifecycle(ctx: ContractContext): void {
  describe('ping and close', () => {
    it('pings while open; after close the handle is unusable', async () => {
      const handle = await ctx.fixture.open();
      await handle.init();
      await expect(handle.ping()).resolves.toBeUndefined();
      await handle.close();
      if (handle.kind === 'memory') return; // Nothing to close: the data lives in the object.
      await expect(handle.ping()).rejects.toThrow();
    });
  });
}
