# syntax=docker/dockerfile:1
#
# Three stages from one build:
#   build - installs everything, builds the client (public/) and the server
#           (dist/), then drops the dev dependencies;
#   web   - nginx with public/ and deploy/nginx.conf (docker-compose's front);
#   app   - the chat: Node 20, production dependencies only, non-root.
# `docker build .` gives the app (the last stage); `--target web` the nginx.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
# Prune keeps the compiled native module: the runtime stage shares this base
# image (same glibc, same Node ABI), so it needs no compiler.
RUN npm run build && npm prune --omit=dev

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
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/public ./public
# data/ holds the SQLite file when DATABASE_URL is left at its default.
RUN mkdir data && chown node:node data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# docker stop sends SIGTERM: the chat answers every waiting poll with an empty
# list (clients reconnect to another replica at once) and exits.
STOPSIGNAL SIGTERM
CMD ["node", "dist/server/main.js"]
