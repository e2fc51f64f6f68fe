# syntax=docker/dockerfile:1
# Build: docker build -t tenant-gateway .
# Run:   docker run -p 8080:8080 -v $PWD/gateway:/etc/tenant-gateway:ro tenant-gateway
#        (reads /etc/tenant-gateway/gateway.yaml; see docs/deploying.md)
# The build context is what .dockerignore lets through: sources, the lock
# file and the production example config; never the demo config or seed
# (public passwords), keys or *.pem.
# Pin the base image by digest for reproducible builds
# (FROM node:24-bookworm-slim@sha256:<digest>, from `docker buildx imagetools
# inspect node:24-bookworm-slim`); this repository cannot reach a registry.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY console ./console
COPY scripts/build-console.mjs ./scripts/
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# No config is baked in: without a mounted one the gateway refuses to start,
# naming the missing file, rather than serve demo users with public passwords.
ENV NODE_ENV=production \
    GATEWAY_CONFIG=/etc/tenant-gateway/gateway.yaml
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Envoy's ext_authz protos, loaded at start with forwardAuth.grpc.
COPY proto ./proto
# The commented production example, to copy from (`docker run … cat config/production.yaml`);
# nothing reads it unless GATEWAY_CONFIG names it.
COPY config/production.yaml ./config/
# Numeric, so a runAsNonRoot policy can check it without reading /etc/passwd.
USER 1000:1000
EXPOSE 8080 9090
# `health` reads the mounted config and asks /healthz on its admin listener
# (the config needs `admin`: /healthz is never on the public listen port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "dist/cli.js", "health"]
# The young generation at 16 MB per semi-space, whatever memory V8 sees: on a
# large host Node 24 takes 32 MB (25–30 MB more RSS under load than Node 20
# and 22, which take 16), under a container's limit every version takes 1 MB,
# about a quarter more CPU per request. Measured: bench/README.md, "Memory".
ENTRYPOINT ["node", "--max-semi-space-size=16", "dist/cli.js"]
CMD ["serve"]
