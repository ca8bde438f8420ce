/**
 * Configuration: the only module that reads `process.env`.
 *
 * The environment is read once into a typed object, every bad value is
 * reported at once (not the first one only), and the result is frozen.
 * Everything else takes a `Config` (or a part of one) as an argument, so
 * tests build their own without touching the environment.
 */
import { type Config, defaults, settings } from './settings.ts';

export { type Config, defaults };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Reads and validates `env` (default `process.env`): each setting by its own
 * parser (server/core/settings.ts), then the rules that tie two settings
 * together; throws a `ConfigError` listing every problem.
 */
export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const config = Object.fromEntries(
    Object.entries(settings).map(([key, setting]) => [
      key,
      setting.parse(read(setting.env), problems),
    ]),
  ) as Config;

  if (config.metricsHost !== undefined && config.metricsPort === undefined) {
    problems.push('METRICS_HOST needs METRICS_PORT: on the chat port, /metrics binds HOST');
  }
  // Node refuses a header timeout longer than the request timeout it is part of.
  if (config.headersTimeoutMs > config.bodyTimeoutMs) {
    problems.push(
      `HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}) must not be longer than BODY_TIMEOUT_MS (${config.bodyTimeoutMs})`,
    );
  }
  if (config.metricsPort !== undefined && config.metricsPort === config.port) {
    problems.push(
      `METRICS_PORT must differ from PORT (${config.port}); leave it unset to serve /metrics on PORT`,
    );
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/**
 * The send limit as a fixed window, the shape express-rate-limit counts in:
 * `sendBurst` sends per window of `sendBurst / sendRatePerSec` seconds (at
 * least one second), so the average stays `sendRatePerSec` a second. A client
 * may get up to twice the burst across the boundary of two windows.
 * Undefined when the limit is off (`SEND_RATE=0`).
 */
export function rateLimitWindow(
  config: Pick<Config, 'sendRatePerSec' | 'sendBurst'>,
): { limit: number; windowMs: number } | undefined {
  if (config.sendRatePerSec === 0) return undefined;
  const windowMs = Math.max(1_000, Math.round((config.sendBurst / config.sendRatePerSec) * 1_000));
  return { limit: Math.max(1, Math.round((windowMs / 1_000) * config.sendRatePerSec)), windowMs };
}

/**
 * Why the `trust proxy` setting is dangerous where it is, if it is.
 * `TRUST_PROXY=true` believes the left-most `X-Forwarded-For` address, which
 * the client writes: on a port open to everyone any client picks its own
 * address, and behind nginx (`$proxy_add_x_forwarded_for` appends to what
 * the client sent) a forged one goes through too. Either way a client
 * escapes every per-address limit. Naming the proxy (`loopback`, its
 * address or subnet) or counting hops (`1`) believes only what it added.
 */
export function trustProxyWarning(
  config: Pick<Config, 'trustProxy' | 'host' | 'port'>,
): string | undefined {
  if (config.trustProxy !== true) return undefined;
  const fix =
    'Set TRUST_PROXY to the proxy instead: loopback (nginx or IIS on this machine), its address or subnet, or a hop count such as 1.';
  const allInterfaces =
    typeof config.port === 'number' &&
    (config.host === undefined || ['0.0.0.0', '::', '[::]'].includes(config.host));
  if (allInterfaces) {
    return `TRUST_PROXY=true while listening on all interfaces: any client that reaches this port can forge X-Forwarded-For and escape the per-address limits. ${fix}`;
  }
  return `TRUST_PROXY=true believes the client's own X-Forwarded-For (a proxy that appends to it keeps a forged address): clients can escape the per-address limits. ${fix}`;
}
