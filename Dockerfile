# gpuboost with its CUDA backend.
#
# Build:  docker build -t gpuboost .
# Run:    docker run --rm --gpus all gpuboost            (runs `gpuboost demo`)
#         docker run --rm --gpus all gpuboost gpuboost --help
#
# `--gpus all` needs the NVIDIA Container Toolkit on the host and a driver that
# supports CUDA 12.6 or newer.
#
# The runtime image is enough: CuPy compiles the raw kernels in cuda/ at run
# time with NVRTC, which the runtime image provides; nvcc (the `-devel` tag) is
# only needed for scripts/cuda_compile_check.py.
FROM nvidia/cuda:12.6.3-runtime-ubuntu24.04

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Ubuntu 24.04 ships Python 3.12 and forbids pip installs into the system
# Python (PEP 668), so gpuboost goes into a virtual environment.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-pip python3-venv \
    && rm -rf /var/lib/apt/lists/*

ENV VIRTUAL_ENV=/opt/venv
RUN python3 -m venv "$VIRTUAL_ENV"
ENV PATH="$VIRTUAL_ENV/bin:$PATH"

WORKDIR /opt/gpuboost
COPY . .

# A regular (non-editable) install: the kernel sources are installed as
# package data under gpuboost/_cuda/. The cuda12 extra brings CuPy for CUDA 12.
RUN pip install ".[cuda12]"

# Run as an unprivileged user.
RUN useradd --create-home --shell /usr/sbin/nologin gpuboost
USER gpuboost
WORKDIR /home/gpuboost

# Compile the CPU kernels into this user's Numba cache now, so that a container's first
# CPU training does not (docs/DESIGN.md, "Cold start"; site-packages is not writable by
# this user, so Numba caches in ~/.cache/numba).
RUN gpuboost compile

CMD ["gpuboost", "demo"]
