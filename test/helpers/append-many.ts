/** Appends `count` messages to `room`, `inFlight` at a time, with texts `<tag>-<n>`: concurrent writers. */
import type { MessageStore } from '../../server/store/store.ts';

export async function appendMany(
  store: MessageStore,
  room: string,
  count: number,
  inFlight: number,
  tag = 'm',
  nickname = 'Bob',
): Promise<void> {
  let next = 0;
  const writer = async () => {
    while (next < count) {
      const n = next++;
      await store.append({ room, nickname, text: `${tag}-${n}` });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, writer));
}
