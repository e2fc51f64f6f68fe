# syntax=docker/dockerfile:1
# Build: docker build -t tenant-gateway .
# Run:   docker run -p 8080:8080 -v $PWD/gateway:/etc/tenant-gateway:ro tenant-gateway
#        (reads /etc/tenant-gateway/gateway.yaml; see README "Deploying")

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# No config is baked in: without a mounted one the gateway refuses to start,
# naming the missing file, rather than serve demo users with public passwords.
ENV NODE_ENV=production \
    GATEWAY_CONFIG=/etc/tenant-gateway/gateway.yaml \
    HEALTHCHECK_URL=http://127.0.0.1:8080/healthz
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY config ./config
USER node
EXPOSE 8080 9090
# Point HEALTHCHECK_URL at the admin port when the config has an `admin` listener.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
