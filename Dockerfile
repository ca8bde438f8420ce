# syntax=docker/dockerfile:1
#
# Three stages from one build:
#   build - installs everything, builds the client (public/) and the server
#           (dist/), then drops the dev dependencies;
#   web   - nginx with public/ and deploy/nginx.conf (docker-compose's front);
#   app   - the chat: Node 26 (the current LTS), production dependencies
#           only, non-root, its SQLite folder a volume.
# `docker build .` gives the app (the last stage); `--target web` the nginx.
#
# This file is read by test/deploy/dockerfile.test.ts but cannot be built on
# the development machines or in CI (no Docker engine there): see
# docs/deploy.md, "What was verified, and where".

# Node 26 is the Active LTS (since 2026-10-28; 24 is in maintenance, 20 past
# its end of life). CI runs the whole suite on it (.ci/run), and
# dockerfile.test.ts keeps this the newest major of package.json's engines;
# bookworm matches CI's Debian 12.
ARG NODE_IMAGE=node:26-bookworm-slim

FROM ${NODE_IMAGE} AS build
# No compiler: better-sqlite3 13 is a Node-API module whose package carries
# its binaries for every platform, and package.json's allowScripts denies
# its install script (npm ci would otherwise run node-gyp from the lockfile,
# WiseLibs/better-sqlite3#1516).
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
# The app stage keeps only this platform's SQLite binary: not the other
# platforms' nor the C sources they were built from.
RUN npm run build && npm prune --omit=dev \
 && cd node_modules/better-sqlite3 \
 && rm -rf deps src binding.gyp \
 && find prebuilds -type f ! -name "linux-$(node -p process.arch).node" -delete

FROM nginx:1.28-alpine AS web
# nginx >= 1.27.3: `server app:3000 resolve` follows the replicas' addresses.
COPY deploy/nginx.conf /etc/nginx/nginx.conf
COPY --from=build /app/public /usr/share/nginx/html
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD wget -q -O /dev/null http://127.0.0.1/ || exit 1

FROM ${NODE_IMAGE} AS app
ENV NODE_ENV=production \
    PORT=3000
WORKDIR /app
# What production needs and nothing else: no client/ or server/ sources, no
# Vite, no TypeScript.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/public ./public
COPY --from=build /app/scripts/docker-entrypoint.mjs ./scripts/
# data/ holds the SQLite file when DATABASE_URL is left at its default
# (sqlite:data/chat.sqlite). A volume, so the messages outlive the container:
#   docker run -v chat-data:/app/data …
RUN mkdir data && chown node:node data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# docker stop sends SIGTERM: the chat answers every waiting poll with an empty
# list (clients reconnect to another replica at once) and exits.
STOPSIGNAL SIGTERM
# The entrypoint puts DATABASE_PASSWORD into DATABASE_URL, percent-encoded,
# then runs dist/server/main.js in the same process (signals reach the chat),
# under the chat's Node flags (server/process/node-flags.ts).
CMD ["node", "--max-semi-space-size=4", "scripts/docker-entrypoint.mjs"]
