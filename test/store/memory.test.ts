import { MemoryStore } from '../../server/store/memory-store.ts';
import { describeStore } from './contract.ts';

// One MemoryStore plays the database: every `open()` hands out the same one.
describeStore(
  'memory',
  async () => {
    const store = new MemoryStore();
    return { open: async () => store };
  },
  { processes: false },
);
