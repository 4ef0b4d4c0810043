# syntax=docker/dockerfile:1
# Sleuth: the web UI built in a Node stage, served by the Python app as a non-root user.

# --- web UI -------------------------------------------------------------------------------
FROM node:22-bookworm-slim AS web
WORKDIR /web
# Dependencies first: this layer is reused until the lockfile changes.
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# --- app ----------------------------------------------------------------------------------
FROM python:3.11-slim-bookworm AS app
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True
WORKDIR /app
# PDF export embeds DejaVu and WenQuanYi Micro Hei (CJK); offline audio speaks with eSpeak NG.
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-dejavu-core fonts-wqy-microhei espeak-ng \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY backend/ backend/
COPY prompts/ prompts/
RUN pip install .
COPY --from=web /web/dist /app/frontend/dist

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin sleuth \
    && mkdir -p /data && chown sleuth:sleuth /data
USER sleuth
ENV SLEUTH_DATA_DIR=/data \
    SLEUTH_WEB_DIST=/app/frontend/dist
VOLUME ["/data"]
EXPOSE 8000

# /api/health needs no token even when SLEUTH_API_TOKEN is set.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4).status == 200 else 1)"]

# 0.0.0.0 is the container's own interface: without SLEUTH_AUTH=accounts or SLEUTH_API_TOKEN the server
# refuses it unless SLEUTH_ALLOW_UNAUTHENTICATED=1 says the published port keeps others out
# (docker-compose.yml sets it, publishing on 127.0.0.1 only; docs/accounts.md).
CMD ["sleuth", "serve", "--host", "0.0.0.0", "--port", "8000"]
