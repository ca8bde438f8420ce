/**
 * The entry point: reads the config, starts the chat, and shuts it down
 * gracefully on SIGTERM and SIGINT (a second signal exits at once).
 */
import { ConfigError, loadConfig } from './config.ts';
import { createLog } from './log.ts';
import { startChat } from './server.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLog(config.logLevel);
  const chat = await startChat(config, { log });
  log('info', `chat listening on ${chat.url} (store ${chat.store.kind}, bus ${chat.bus.kind})`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log('info', `${signal}: answering ${chat.hub.size} waiting polls and shutting down`);
    chat.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log('error', 'shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Cannot start the chat: ${(error as Error).stack ?? String(error)}\n`);
  }
  process.exit(1);
});
