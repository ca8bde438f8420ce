/**
 * Who is here and who is typing (issue 21): the page side of `people` and
 * `typing` in the /recv answer (protocol.ts). It reaches the poll loop only
 * through the feed's `query` and `onAnswer` hooks (and the status and
 * messages it reports), so it works the same whether this tab polls or
 * another tab polls and hands answers on; and on a server without these
 * fields it stays hidden and sends nothing.
 */
import { type Message, type RecvAnswer, typing } from './api.ts';
import { browserClientId } from './client-id.ts';
import { PeopleList, pollNickname } from './people.ts';
import type { ConnectionStatus } from './poll.ts';
import { TypingIndicator, TypingNotifier } from './typing.ts';
import type { ChatView } from './view.ts';

/** A rename is told once the person pauses this long: one poll for a name, not one per key. */
const RENAME_PAUSE_MS = 250;

export interface WhoIsHereOptions {
  room: string;
  view: Pick<ChatView, 'showPeople' | 'showTyping'>;
  /** The nickname field as it is now. */
  nickname: () => string;
  /** The message field as it is now. */
  draft: () => string;
  /** Sends the waiting poll again (the feed's `repoll`). */
  repoll: () => void;
}

export function createWhoIsHere(deps: WhoIsHereOptions) {
  const people = new PeopleList();
  const typists = new TypingIndicator({
    ownClient: browserClientId,
    render: (text) => deps.view.showTyping(text),
  });
  const notifier = new TypingNotifier({
    async send(stopped) {
      const nickname = pollNickname(deps.nickname());
      const fields = {
        room: deps.room,
        client: browserClientId(),
        nickname,
        ...(stopped && { stopped }),
      };
      if ((await typing(fields)) === 'unknown') notifier.disable();
    },
  });
  /** The nickname the last poll carried, and the pause before a rename re-polls. */
  let polledAs: string | undefined;
  let renaming: ReturnType<typeof setTimeout> | undefined;
  return {
    /** Added to each poll: the list's version and the person's nickname. */
    query: () => {
      const query = people.query(deps.nickname());
      polledAs = query.nickname;
      return query;
    },
    /**
     * The person renamed: once they pause, the waiting poll is sent again
     * with the new name, so the room hears of it at once (the server wakes
     * the room's polls for a rename), not with the next answer.
     */
    onRenamed(): void {
      clearTimeout(renaming);
      renaming = setTimeout(() => {
        if (people.known && pollNickname(deps.nickname()) !== polledAs) deps.repoll();
      }, RENAME_PAUSE_MS);
    },
    onAnswer(answer: RecvAnswer): void {
      if (answer.people || answer.typing || answer.typingOnly) notifier.enable();
      const news = people.take(answer);
      if (news) deps.view.showPeople(news);
      typists.take(answer);
    },
    onMessages(messages: readonly Message[]): void {
      for (const message of messages) typists.messageFrom(message.nickname);
    },
    /** Lost the server: what was known of who is here and who types may be wrong now. */
    onStatus(status: ConnectionStatus): void {
      if (status !== 'reconnecting' && status !== 'stopped') return;
      people.forget();
      typists.clear();
    },
    onTyped: () => notifier.typed(deps.draft()),
    onSent: () => notifier.sent(),
    settled: () => notifier.settled(),
  };
}
