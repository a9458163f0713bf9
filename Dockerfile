# syntax=docker/dockerfile:1
# Multi-stage build: wheels are built in a throw-away stage; the runtime image holds
# the installed package only and runs as an unprivileged user.
FROM python:3.11-slim AS build
WORKDIR /src
RUN python -m pip install --no-cache-dir --upgrade pip wheel
COPY pyproject.toml README.md ./
COPY app ./app
COPY models ./models
COPY costwise ./costwise
COPY migrations ./migrations
RUN python -m pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    COSTWISE_HOST=0.0.0.0 \
    COSTWISE_PORT=8000 \
    COSTWISE_DATABASE_URL=sqlite:////data/costwise.db
RUN groupadd --system costwise && useradd --system --gid costwise --home-dir /data costwise \
    && mkdir -p /data && chown costwise:costwise /data
COPY --from=build /wheels /wheels
RUN python -m pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER costwise
WORKDIR /data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/health/live', timeout=2).status == 200 else 1)"
CMD ["costwise", "serve"]
