# Sluice simulated inference worker (OpenAI-compatible HTTP, load reports on NATS).
# Build from the repository root:  docker build -f docker/worker.Dockerfile -t sluice-worker .
# Run: docker run sluice-worker --nats-url nats://nats:4222 --worker-id w-1 \
#        --advertise-url http://<address the frontends reach>:9001
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: every dependency (the Nest CLI is a devDependency), compile to dist/ -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# swagger-ui-dist's install script phones home unless told not to.
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY tools ./tools
COPY migrations ./migrations
COPY libs ./libs
COPY apps ./apps
RUN npm run build

# --- runtime dependencies only --------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# No optional dependency is needed at run time: they are Node itself for npm scripts on a host
# without Node 24 (the image has its own) and pg-cloudflare (for Cloudflare Workers only).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime ----------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
# NO_COLOR: plain log lines for a log collector, not terminal colour codes.
ENV NODE_ENV=production \
    NO_COLOR=1
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY docker/healthcheck.js ./docker/healthcheck.js
# The image's `node` user, by number so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 9001
# The worker reads flags only (no environment); the check finds --port on the command line.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "/app/docker/healthcheck.js", "/health", "--port", "SLUICE_WORKER_PORT", "9001"]
ENTRYPOINT ["node", "dist/apps/worker/main.js"]
# The worker's own default host is 127.0.0.1, unreachable from outside the container. Flags given
# to `docker run` / `command:` replace this list, so they must repeat --host 0.0.0.0.
CMD ["--host", "0.0.0.0", "--port", "9001"]
