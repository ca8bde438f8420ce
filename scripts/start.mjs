/**
 * `npm start`: serves the built chat, building it first only when the build
 * is missing or older than the sources (`build-if-stale.mjs`).
 *
 * - Fresh clone (`npm install && npm start`): builds, then starts.
 * - Production copy (`npm ci --omit=dev`, maybe without `client/`): starts
 *   the build it has, without ever calling Vite.
 *
 * The chat then runs in this same process (no second Node), so signals from
 * npm, systemd or Docker reach its graceful shutdown directly. With
 * `WORKERS` > 1, Node's cluster forks this file again for each worker: only
 * the primary checks the build.
 */
import cluster from 'node:cluster';
import { buildIfStale } from './build-if-stale.mjs';

if (cluster.isPrimary && !buildIfStale()) process.exit(1);
await import('../dist/server/main.js');
