/**
 * The one message factory of the tests: a stored message as the store would
 * give it back, for tests that hand messages to the hub, the bus or the log
 * without going through a store. Tests that go through a store append
 * instead, and take the message it answers with.
 */
import type { Message } from '../../protocol/protocol.ts';

/** Message `id` in `room`; its text names its id (`m3`), unless `fields` say otherwise. */
export function message(id: number, room = 'main', fields: Partial<Message> = {}): Message {
  return { id, room, nickname: 'n', text: `m${id}`, time: new Date(0).toISOString(), ...fields };
}
