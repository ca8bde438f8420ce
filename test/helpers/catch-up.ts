/** What a client does after an answer: poll on with its cursor until it has `lastId`. */
import type { RecvAnswer } from '../../protocol/protocol.ts';

/**
 * Keeps polling `room` from `answer` until the cursor reaches `lastId`, as a
 * client would; returns every id received, in order (repeats included, so a
 * test sees a double).
 */
export async function pollUntil(
  recv: (query: string) => Promise<RecvAnswer>,
  room: string,
  answer: RecvAnswer,
  lastId: number,
): Promise<number[]> {
  const ids = answer.messages.map((m) => m.id);
  let cursor = answer.cursor;
  while (cursor < lastId) {
    const next = await recv(`room=${room}&since=${cursor}`);
    ids.push(...next.messages.map((m) => m.id));
    cursor = next.cursor;
  }
  return ids;
}
