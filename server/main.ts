/**
 * The entry point: reads the config, then either
 * - runs the cluster primary (`WORKERS` > 1, where Node's cluster can share
 *   the port), which forks the workers that run this same file
 *   (`server/process/cluster.ts`), or
 * - starts the chat in this process (one process, or a cluster worker).
 *
 * The chat shuts down gracefully on SIGTERM and SIGINT, or when the cluster
 * primary asks; a second signal exits at once.
 */
import cluster from 'node:cluster';
import { isChatIpc, sendIpc } from './bus/cluster-ipc.ts';
import { type Config, ConfigError, loadConfig } from './core/config.ts';
import { createLog } from './core/log.ts';
import { chooseLogFormat, logDestination } from './core/log-format.ts';
import { clusterUnsupported, defaultRestartPolicy, runPrimary } from './process/cluster.ts';
import { listeningSignal } from './process/listening.ts';
import type { RunningChat } from './process/server.ts';
import { startUpProblem } from './process/start-up-error.ts';

/** Read before anything can fail, so a failure can be told in the config's terms. */
let config: Readonly<Config> | undefined;

async function main(): Promise<void> {
  config = loadConfig();
  // One destination for the process's lines: pretty for a person at a terminal, else JSON.
  const destination = logDestination(chooseLogFormat(config.logFormat, process.stderr));
  const unsupported = config.workers > 1 ? clusterUnsupported(config.port) : undefined;
  if (unsupported)
    createLog(
      config.logLevel,
      '',
      destination,
    )('warn', `WORKERS=${config.workers}: ${unsupported}`);
  if (config.workers > 1 && !unsupported && cluster.isPrimary) {
    const log = createLog(config.logLevel, 'primary: ', destination);
    if (config.databaseUrl.startsWith('memory:')) {
      log(
        'warn',
        'DATABASE_URL=memory: gives each worker its own messages; use SQLite or a server',
      );
    }
    // Its parent, if it has an IPC channel, hears once every worker listens.
    const outcome = await runPrimary(config, log, defaultRestartPolicy, (signal) =>
      sendIpc(process, signal),
    );
    log(outcome.code === 0 ? 'info' : 'error', outcome.why);
    process.exit(outcome.code);
  }
  const log = createLog(
    config.logLevel,
    cluster.isWorker ? `worker ${process.pid}: ` : '',
    destination,
  );
  let chat: RunningChat | undefined;
  let stoppedAt: number | undefined;
  let stopWhy: string | undefined;

  const stop = (why: string, force: boolean) => {
    if (stoppedAt !== undefined) {
      // A second signal means "now". But the primary's request may come on
      // top of a signal sent to the whole process group (Ctrl-C, systemd), and
      // a group signal can arrive twice at once: neither is a second request.
      if (force && Date.now() - stoppedAt > 1_000) process.exit(1);
      return;
    }
    stoppedAt = Date.now();
    stopWhy = why;
    if (chat) closeChat(chat);
  };
  const closeChat = (running: RunningChat) => {
    log('info', `${stopWhy}: answering ${running.hub.waiting} waiting polls and shutting down`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log('error', 'shutdown failed', error);
        process.exit(1);
      },
    );
  };
  // Listen before starting: a stop asked for during startup is kept for
  // when the chat is up (the primary may stop a worker that is still starting).
  process.on('SIGTERM', () => stop('SIGTERM', true));
  process.on('SIGINT', () => stop('SIGINT', true));
  if (cluster.isWorker) {
    process.on('message', (raw: unknown) => {
      if (isChatIpc(raw) && raw.lpchat === 'shutdown') stop('the primary asked', false);
    });
  }

  // Only a process that serves loads the server (Express, the stores, the
  // bus): the cluster primary above never does. A stop asked for while it
  // loads is kept, like one asked for while it starts.
  const { startChat } = await import('./process/server.ts');
  chat = await startChat(config, { log });
  // The URL comes first and stays connectable: people and the guide's
  // check read it from this line; programs that start the chat get the
  // listening signal instead (to its parent, or a worker's to the primary).
  const address = chat.server.address();
  log(
    'info',
    `chat listening on ${chat.url} (${boundTo(address)}store ${chat.store.kind}, bus ${chat.bus.kind})`,
  );
  sendIpc(process, listeningSignal(chat.url, address));
  if (stoppedAt !== undefined) closeChat(chat);
}

/** `bound to 0.0.0.0:3000, every interface; `: where the socket really is, when it is on TCP. */
function boundTo(address: ReturnType<RunningChat['server']['address']>): string {
  if (address === null || typeof address === 'string') return '';
  const every = address.address === '::' || address.address === '0.0.0.0';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `bound to ${host}:${address.port}${every ? ', every interface' : ''}; `;
}

main().catch((error: unknown) => {
  const problem = config && startUpProblem(error, config);
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else if (problem !== undefined) {
    process.stderr.write(`Cannot start the chat: ${problem}\n`);
    if (config?.logLevel === 'debug') process.stderr.write(`${(error as Error).stack}\n`);
  } else {
    process.stderr.write(`Cannot start the chat: ${(error as Error).stack ?? String(error)}\n`);
  }
  process.exit(1);
});
