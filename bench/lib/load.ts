/**
 * The parent's side of the load generator: forks `bench/load/generator.ts`
 * in its own process (its CPU is measured apart from the server's) with the
 * open-file limit raised, and runs one command at a time on it.
 */
import type { ChildProcess } from 'node:child_process';
import type {
  Command,
  FanoutCommand,
  FanoutResult,
  MixCommand,
  MixResult,
  SustainedCommand,
  SustainedResult,
} from '../load/generator.ts';
import { openFileLimit } from './proc.ts';
import { nodeWithTsx, spawnWithFileLimit } from './spawn.ts';

type Reply = { ok: true; result: unknown } | { ok: false; error: string } | { armed: true };

export class LoadGenerator {
  readonly #child: ChildProcess;

  constructor() {
    this.#child = spawnWithFileLimit([...nodeWithTsx, 'bench/load/generator.ts'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  get fileLimit(): number {
    return openFileLimit(this.#child.pid!);
  }

  /** `onArmed` runs while a fan-out's polls all wait, before the send (to read the server's memory). */
  run(command: FanoutCommand, onArmed?: () => Promise<void>): Promise<FanoutResult>;
  /** `onArmed` runs once every subscriber waits and the senders are connected, before the first send. */
  run(command: SustainedCommand, onArmed?: () => Promise<void>): Promise<SustainedResult>;
  run(command: MixCommand): Promise<MixResult>;
  run(command: Command, onArmed?: () => Promise<void>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const child = this.#child;
      const onExit = () => reject(new Error('the load generator died'));
      const onMessage = (reply: Reply) => {
        if ('armed' in reply) {
          (onArmed?.() ?? Promise.resolve()).then(
            () => child.send({ kind: 'fire' }),
            (error: unknown) => reject(error),
          );
          return;
        }
        child.off('exit', onExit);
        child.off('message', onMessage);
        if (reply.ok) resolve(reply.result);
        else reject(new Error(`load generator: ${reply.error}`));
      };
      child.once('exit', onExit);
      child.on('message', onMessage);
      child.send(command);
    });
  }

  close(): void {
    if (this.#child.connected) this.#child.disconnect();
  }
}
