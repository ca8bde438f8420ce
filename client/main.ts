/**
 * The page's wiring: read the room from the URL (refused in words when the
 * server would refuse it: `words.ts`), show the latest messages, follow the
 * room's feed (`tabs/`: one long poll per browser and room, run by one of
 * its tabs), start the sender (`sender.ts`), and connect them to the DOM
 * (`view.ts`). Who is here and who is typing (`who-is-here.ts`) hang on
 * the feed's `query` and `onAnswer` hooks.
 */
import $ from 'jquery/slim';
import { ApiError, history, type Message } from './api.ts';
import { backoffDelay, sleep } from './backoff.ts';
import { browserClientId } from './client-id.ts';
import { draftState, refusal } from './draft.ts';
import { chime, NOTIFY_KEY, type NotifyChoices, readChoices, worthTelling } from './notify.ts';
import { OwnMessages } from './own-messages.ts';
import { Sender } from './sender.ts';
import { loadItem, saveItem } from './storage.ts';
import { createFeed } from './tabs/create-feed.ts';
import { UnreadTitle } from './unread.ts';
import { ChatView } from './view.ts';
import { createWhoIsHere } from './who-is-here.ts';
import { errorInWords, roomRefusal } from './words.ts';

/** Messages per `/history` page: the latest page on open, then older ones on scroll. */
const PAGE = 50;
/** Start loading the older page this close (px) to the top, before the reader hits it. */
const NEAR_TOP_PX = 80;
const NICKNAME_KEY = 'chat.nickname';

const room = new URLSearchParams(location.search).get('room') || 'main';
// Which messages are ours is kept per browser, across reloads (own-messages.ts).
const own = new OwnMessages(room);
const view = new ChatView({
  isMine: (message) => own.has(message),
  nickname: () => String($('#nickname').val() ?? ''),
});
view.showRoom(room);
const unread = new UnreadTitle({
  title: document.title,
  visible: () => document.visibilityState === 'visible',
  setTitle: (title) => {
    document.title = title;
  },
});
document.addEventListener('visibilitychange', () => unread.visibilityChanged());

// Listening to the room's other tabs from now on, before the first page
// loads: what they hand on meanwhile is kept (tabs/feed.ts).
const feed = createFeed({
  room,
  client: browserClientId,
  onMessages: (messages) => {
    view.addMessages(messages);
    unread.arrived(messages.filter((message) => !own.has(message)).length);
    whoIsHere.onMessages(messages);
    notifications.onMessages(messages);
  },
  onOnline: (count) => view.showOnline(count),
  onStatus: (status, error) => {
    view.showStatus(status, error);
    if (status === 'reconnecting' || status === 'stopped') view.showPresenceStale();
    // The server is back: what waits to be sent goes now, not at its own backoff's end.
    if (status === 'connected') sender.wake();
    whoIsHere.onStatus(status);
  },
  onReset: reloadRoom,
  // `whoIsHere` is defined below; the feed calls these only once the page runs.
  query: () => whoIsHere.query(),
  onAnswer: (answer) => whoIsHere.onAnswer(answer),
});

const $nickname = $('#nickname');
const $message = $('#message');
$nickname.val(loadItem(NICKNAME_KEY) ?? '');
$nickname.on('change', () => saveItem(NICKNAME_KEY, String($nickname.val()).trim()));

const sender = new Sender({
  room,
  // The typing notice of the draft reaches the server before the message that ends it.
  before: () => whoIsHere.settled(),
  onSent(pending, message) {
    own.add(message);
    view.removePending(pending.key);
    view.markMine(message.id);
    view.addMessages([message]);
  },
  onRetrying(pending, error) {
    view.retryingPending(pending.key, error);
  },
  onRefused(pending, error) {
    view.removePending(pending.key);
    view.showSendError(errorInWords(error));
    // Hand the text back, so nothing typed is lost.
    const current = String($message.val());
    $message.val(current.trim() === '' ? pending.text : `${pending.text}\n${current}`);
    showDraft();
  },
});

function showDraft(): void {
  view.showDraft(draftState(String($message.val())));
}

/** The reason shown for a refused send goes once the draft could be sent. */
function clearSolvedRefusal(): void {
  if (refusal(String($message.val()), String($nickname.val())) === undefined) {
    view.showSendError(undefined);
  }
}

$message.on('input', () => {
  showDraft();
  clearSolvedRefusal();
  whoIsHere.onTyped();
});
$nickname.on('input', () => {
  clearSolvedRefusal();
  whoIsHere.onRenamed();
});

$('#composer').on('submit', (event) => {
  event.preventDefault();
  const text = String($message.val());
  const nickname = String($nickname.val()).trim();
  // Refused here, with the reason, rather than cut or dropped without a word.
  const problem = refusal(text, nickname);
  view.showSendError(problem);
  if (problem !== undefined) return;
  saveItem(NICKNAME_KEY, nickname);
  view.addPending(sender.enqueue(text, nickname));
  whoIsHere.onSent();
  $message.val('').trigger('focus');
  showDraft();
});

$message.on('keydown', (event) => {
  // Enter sends; Shift+Enter adds a line; Enter that confirms an IME composition does neither.
  if (event.key !== 'Enter' || event.shiftKey || event.originalEvent?.isComposing) return;
  event.preventDefault();
  ($('#composer')[0] as HTMLFormElement).requestSubmit();
});

let loadingOlder = false;
let hasOlder = true;
/** Counts room resets: an older page asked for before a reset belongs to the void room. */
let generation = 0;

async function loadOlder(): Promise<void> {
  const before = view.oldestId();
  if (loadingOlder || !hasOlder || before === undefined) return;
  loadingOlder = true;
  view.showOlder('loading');
  const asked = generation;
  try {
    const older = await history(room, before, PAGE);
    if (asked !== generation) return;
    hasOlder = older.length === PAGE;
    view.addOlder(older);
    view.showOlder(hasOlder ? 'idle' : 'start');
  } catch {
    view.showOlder('error');
  } finally {
    loadingOlder = false;
  }
  // A tall screen may still show no scroll bar: keep filling it.
  if (hasOlder && view.fitsWithoutScrolling()) void loadOlder();
}

view.scrollArea.on('scroll', () => {
  if (view.scrollArea[0]!.scrollTop < NEAR_TOP_PX) void loadOlder();
});

/** The latest page, retried with backoff until the server answers (it may be restarting). */
async function loadLatest(): Promise<Message[] | undefined> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await history(room, undefined, PAGE);
    } catch (thrown) {
      const error = thrown instanceof ApiError ? thrown : undefined;
      if (error && !error.retryable) {
        view.showStatus('stopped', error);
        return undefined;
      }
      view.showStatus('reconnecting', error);
      await sleep(backoffDelay(attempt, error?.retryAfterMs)).done;
    }
  }
}

/** Shows the latest page; returns the id of its newest message (0 for an empty room). */
function showLatest(latest: Message[]): number {
  view.addMessages(latest);
  view.scrollToBottom();
  hasOlder = latest.length === PAGE;
  if (!hasOlder && latest.length > 0) view.showOlder('start');
  if (hasOlder && view.fitsWithoutScrolling()) void loadOlder();
  return latest.at(-1)?.id ?? 0;
}

/**
 * The room was reset on the server (a new database, or messages deleted):
 * the ids shown are void. Show the room as it is now and poll on from there.
 */
async function reloadRoom(head: number): Promise<number | undefined> {
  generation += 1;
  view.clearMessages();
  const latest = await loadLatest();
  if (latest === undefined) return head;
  view.showStatus('connected');
  return Math.max(head, showLatest(latest));
}

// ── Desktop notifications (notify.ts) ───────────────────────────────────
// The choices live in localStorage, shared by every tab; only the tab that
// runs the poll notifies, so a message makes one notification however many
// tabs are open; and only while the page is hidden.
const notifications = (() => {
  const $mode = $('#notify-mode');
  const $sound = $('#notify-sound');
  const $mute = $('#notify-mute');
  let choices = readChoices(loadItem(NOTIFY_KEY));
  const supported = 'Notification' in window;
  const show = () => {
    $mode.val(choices.mode);
    $sound.prop('checked', choices.sound);
    $mute.prop('checked', choices.muted.includes(room));
  };
  const choose = (next: NotifyChoices) => {
    choices = next;
    saveItem(NOTIFY_KEY, JSON.stringify(choices));
    show();
  };
  if (supported) {
    $('#notify').prop('hidden', false);
    show();
    $mode.on('change', async () => {
      const mode = readChoices(JSON.stringify({ mode: $mode.val() })).mode;
      // Asked here only: the person just picked a choice that needs it.
      if (mode !== 'off' && Notification.permission !== 'granted') {
        const answer = await Notification.requestPermission();
        if (answer !== 'granted') {
          choose({ ...choices, mode: 'off' });
          return;
        }
      }
      choose({ ...choices, mode });
    });
    $sound.on('change', () => choose({ ...choices, sound: $sound.prop('checked') === true }));
    $mute.on('change', () => {
      const others = choices.muted.filter((name) => name !== room);
      choose({ ...choices, muted: $mute.prop('checked') === true ? [...others, room] : others });
    });
    window.addEventListener('storage', (event) => {
      if (event.key !== NOTIFY_KEY) return;
      choices = readChoices(event.newValue ?? undefined);
      show();
    });
  }
  return {
    onMessages(messages: readonly Message[]): void {
      if (!supported || !feed.leading || document.visibilityState !== 'hidden') return;
      if (Notification.permission !== 'granted') return;
      const others = messages.filter((message) => !own.has(message));
      const told = worthTelling(others, choices, room, String($nickname.val()).trim());
      for (const message of told) {
        // The tag makes a repeat (another tab, a reload) replace it, not add one.
        new Notification(`${message.nickname} in #${room}`, {
          body: message.text,
          tag: `lpchat:${room}:${message.id}`,
        });
      }
      if (told.length > 0 && choices.sound) chime();
    },
  };
})();

// Who is here and who is typing (who-is-here.ts): on the feed's hooks.
const whoIsHere = createWhoIsHere({
  room,
  view,
  nickname: () => String($nickname.val()),
  draft: () => String($message.val()),
  repoll: () => feed.repoll(),
});

// The skip link focuses the field itself: following `#message` alone moves
// only where the next Tab starts, and leaves a fragment in the address.
$('#skip').on('click', (event) => {
  event.preventDefault();
  $message.trigger('focus');
});

async function start(): Promise<void> {
  // Whoever opens the chat came to write: the field has the focus from the start.
  $message.trigger('focus');
  const refused = roomRefusal(room);
  if (refused) {
    // Refused here, in words, before any request: the server would only say its pattern.
    view.showStatus('stopped');
    view.showRoomRefused(refused.reason, refused.instead);
    // Nothing typed here could be sent: Send says so by being off.
    $('#composer .send').prop('disabled', true);
    return;
  }
  const latest = await loadLatest();
  if (latest === undefined) return;
  const cursor = showLatest(latest);
  view.showStatus('connected');
  feed.start(cursor);

  // The browser knows before our backoff does: retry at once.
  window.addEventListener('online', () => {
    feed.wake();
    sender.wake();
  });
}

void start();
