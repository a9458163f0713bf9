# syntax=docker/dockerfile:1
# Multi-stage build: the package and its dependencies are installed into a virtual
# environment in a throw-away stage (pip, wheel and the build's caches stay there); the
# runtime image copies that environment only and runs as an unprivileged user.
FROM python:3.11-slim AS build
WORKDIR /src
RUN python -m venv /opt/costwise/venv
ENV PATH=/opt/costwise/venv/bin:$PATH
RUN python -m pip install --no-cache-dir --upgrade pip wheel
COPY pyproject.toml README.md ./
COPY app ./app
COPY models ./models
COPY costwise ./costwise
COPY migrations ./migrations
# Not needed at run time: the dependencies' own test suites, pyarrow's C++ headers, pip
# and wheel (the image never installs anything after this).
RUN python -m pip install --no-cache-dir . \
    && site=$(python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") \
    && find "$site" -depth -type d -name tests -exec rm -rf {} + \
    && rm -rf "$site/pyarrow/include" \
    && python -m pip uninstall --yes --quiet pip wheel

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/costwise/venv/bin:$PATH \
    COSTWISE_HOST=0.0.0.0 \
    COSTWISE_PORT=8000 \
    COSTWISE_DATABASE_URL=sqlite:////data/costwise.db \
    NUMBA_CACHE_DIR=/opt/costwise/numba-cache
# libgomp1: numba's OpenMP threading layer (parallel histograms; without it the kernel
# stays on one thread).
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
    && groupadd --system costwise && useradd --system --gid costwise --home-dir /data costwise \
    && mkdir -p /data /opt/costwise/numba-cache \
    && chown costwise:costwise /data /opt/costwise/numba-cache
COPY --from=build /opt/costwise/venv /opt/costwise/venv
USER costwise
# The weak learners' numba kernels are compiled here, once, by the user that serves, into
# NUMBA_CACHE_DIR (numba uses a cache directory only if it can write there, and keys its
# index by the source file's contents): no serving process compiles on its first training.
RUN python -m models.catalog.warmup
WORKDIR /data
EXPOSE 8000
# The probe follows COSTWISE_PORT (set it at run time to serve on another port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import os,sys,urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:%s/health/live' % os.environ.get('COSTWISE_PORT', '8000'), timeout=2).status == 200 else 1)"
CMD ["costwise", "serve"]
