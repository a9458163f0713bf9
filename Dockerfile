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
    COSTWISE_DATABASE_URL=sqlite:////data/costwise.db \
    NUMBA_CACHE_DIR=/opt/costwise/numba-cache
RUN groupadd --system costwise && useradd --system --gid costwise --home-dir /data costwise \
    && mkdir -p /data && chown costwise:costwise /data
COPY --from=build /wheels /wheels
# libgomp1: numba's OpenMP threading layer (parallel histograms; without it the kernel
# stays on one thread). The weak learners' kernels are compiled here, once, into
# NUMBA_CACHE_DIR, so that no serving process pays the compile on its first training.
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/*
RUN python -m pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && python -m models.catalog.warmup && chmod -R a+rX /opt/costwise
USER costwise
WORKDIR /data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/health/live', timeout=2).status == 200 else 1)"
CMD ["costwise", "serve"]
