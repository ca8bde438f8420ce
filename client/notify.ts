/**
 * Desktop notifications (the Notification API) for messages that come while
 * the tab is hidden.
 *
 * - The browser is asked for permission only when the person picks a
 *   choice that needs it, on the control that says what it does (never on
 *   load).
 * - The choices (off, mentions, every message; a sound; the rooms muted)
 *   are kept in localStorage, so every tab of the site shares them, and a
 *   change in one tab reaches the others (`storage` events).
 * - One notification per message however many tabs are open: only the tab
 *   that runs the room's poll (the feed's leader, tabs/) notifies.
 * No DOM here but the `Notification` itself and the sound.
 */
import { mentions } from './mentions.ts';

export type NotifyMode = 'off' | 'mentions' | 'all';

export interface NotifyChoices {
  mode: NotifyMode;
  sound: boolean;
  /** Rooms that never notify. */
  muted: string[];
}

export const NOTIFY_KEY = 'chat.notify';

export const noChoices: NotifyChoices = Object.freeze({ mode: 'off', sound: false, muted: [] });

/** The stored choices, or the defaults for anything missing or unreadable. */
export function readChoices(stored: string | undefined): NotifyChoices {
  if (stored === undefined) return { ...noChoices, muted: [] };
  try {
    const value = JSON.parse(stored) as Partial<NotifyChoices>;
    const mode: NotifyMode = value.mode === 'mentions' || value.mode === 'all' ? value.mode : 'off';
    const muted = Array.isArray(value.muted)
      ? value.muted.filter((room): room is string => typeof room === 'string')
      : [];
    return { mode, sound: value.sound === true, muted };
  } catch {
    return { ...noChoices, muted: [] };
  }
}

export interface Incoming {
  nickname: string;
  text: string;
}

/** The messages worth a notification in `room` for a reader called `nickname`. */
export function worthTelling<M extends Incoming>(
  messages: readonly M[],
  choices: NotifyChoices,
  room: string,
  nickname: string,
): M[] {
  if (choices.mode === 'off' || choices.muted.includes(room)) return [];
  if (choices.mode === 'all') return [...messages];
  return messages.filter((message) => mentions(message.text, nickname));
}

/** A short, quiet tone, for a notification with sound on. */
export function chime(): void {
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    gain.gain.value = 0.05;
    tone.frequency.value = 880;
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.15);
    tone.onended = () => void audio.close();
  } catch {
    // No audio here: the notification alone says it.
  }
}
