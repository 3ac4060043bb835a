# Sluice frontend: OpenAI-compatible admission-control gateway (HTTP :8000).
# Build from the repository root:  docker build -f docker/frontend.Dockerfile -t sluice-frontend .
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
# No production dependency needs an install script (the only one is swagger-ui-dist's analytics).
# No optional dependency is needed at run time: they are Node itself for npm scripts on a host
# without Node 24 (the image has its own) and pg-cloudflare (for Cloudflare Workers only).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime ----------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
# NO_COLOR: plain log lines for a log collector, not terminal colour codes.
ENV NODE_ENV=production \
    NO_COLOR=1 \
    SLUICE_HTTP_HOST=0.0.0.0 \
    SLUICE_HTTP_PORT=8000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY docker/healthcheck.js ./docker/healthcheck.js
COPY docker/entrypoint-frontend.sh /usr/local/bin/sluice-entrypoint
# ./data is only used without SLUICE_DATABASE_URL (embedded database, e.g. a quick `docker run`);
# it is the one place the process writes, so it belongs to the runtime user.
RUN chmod 0755 /usr/local/bin/sluice-entrypoint && mkdir -p /app/data && chown 1000:1000 /app/data
# The image's `node` user, by number so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8000
# Healthy = can serve (GET /ready: not draining, thresholds loaded once). Not /health: that
# also turns 503 while PostgreSQL or NATS is away, when the frontend still serves on the last
# loaded thresholds and the last known load.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/docker/healthcheck.js", "/ready", "--http-port", "SLUICE_HTTP_PORT", "8000"]
ENTRYPOINT ["/usr/local/bin/sluice-entrypoint"]
CMD []
