# Sluice engine bridge (contract §7): scrapes stock vLLM, SGLang, llama.cpp or TGI servers and
# publishes their load on NATS for the frontends; its own GET /metrics and GET /health on :9400.
# Build from the repository root:  docker build -f docker/bridge.Dockerfile -t sluice-bridge .
# Run: docker run sluice-bridge --engine vllm --nats-url nats://nats:4222 \
#        --target vllm-0=http://10.0.0.5:8000 --target vllm-1=http://10.0.0.6:8000
#      (or --targets-file /etc/sluice/targets, or --dns-target vllm.inference.svc.cluster.local:8000;
#      every flag is also SLUICE_<UPPER_SNAKE>, lists comma-separated: SLUICE_TARGET=a=URL,b=URL)
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: the same stage as frontend.Dockerfile and worker.Dockerfile, so one build serves all
# three images from the layer cache ------------------------------------------------------------
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
# NO_COLOR: plain log lines for a log collector, not terminal colour codes. The listen address
# is the bridge's own default, spelled out so the health check below and `docker inspect` agree.
ENV NODE_ENV=production \
    NO_COLOR=1 \
    SLUICE_HTTP_HOST=0.0.0.0 \
    SLUICE_HTTP_PORT=9400
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY docker/healthcheck.js ./docker/healthcheck.js
# The image's `node` user, by number so that Kubernetes can verify runAsNonRoot. The bridge
# writes nothing (a --targets-file is only read), so a read-only root filesystem is fine.
USER 1000:1000
EXPOSE 9400
# /health answers 200 while the bridge runs, whatever state its engines are in: an engine that is
# down is reported to the frontends as worker_down, which is no reason to restart the bridge.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "/app/docker/healthcheck.js", "/health", "--http-port", "SLUICE_HTTP_PORT", "9400"]
ENTRYPOINT ["node", "dist/apps/bridge/main.js"]
# No default: --engine, --nats-url and at least one target source are required (exit 2 names the
# missing flag); give them as `docker run` arguments, `command:` / `args:`, or SLUICE_* variables.
CMD []
