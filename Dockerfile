FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
# The standalone image serves every configuration, so it keeps the optional peers a host app may
# leave out (PostgreSQL, Redis, the fastify adapter, the docs UI), at the lockfile's versions.
RUN npm ci && npm run build && npm prune --omit=dev --ignore-scripts \
  && npm install --no-save --no-audit --no-fund --ignore-scripts --omit=dev pg ioredis @nestjs/platform-fastify @nestjs/swagger

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY package.json ./
# ./data holds the generated encryption key file (and the SQLite file when used); owned by the runtime user.
RUN mkdir -p /app/data && chown node:node /app/data && chmod 700 /app/data
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/trendhooks.js"]
CMD ["serve"]
