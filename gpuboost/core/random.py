"""Counter-based random numbers, identical on NumPy and CuPy (see docs/DESIGN.md).

Per-row random choices (row subsampling, GOSS) must not depend on the backend
nor move per-row data between host and device. They therefore come from a
stateless hash of ``(seed, stream, row)`` evaluated with the backend's array
module ``xp``; host-side choices (column sampling) use :func:`host_rng`.

The exact formula (every operation on unsigned 64-bit integers, modulo 2**64)
----------------------------------------------------------------------------
``splitmix64(x)`` is one step of the SplitMix64 generator from state ``x``::

    z = x + 0x9E3779B97F4A7C15                 # SPLITMIX64_GAMMA
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9   # SPLITMIX64_SHIFT_1, _MULTIPLIER_1
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB   # SPLITMIX64_SHIFT_2, _MULTIPLIER_2
    return z ^ (z >> 31)                       # SPLITMIX64_SHIFT_3

The key of a stream (computed once on the host, see :func:`stream_key`)::

    key = splitmix64(splitmix64(seed) ^ stream)

The uniform number of row ``r`` (``r`` = the row id, not its position in a
subset; ``row_key`` is the state of a SplitMix64 generator after ``r`` steps
from ``key``, so the rows of a stream are that generator's outputs in order)::

    row_key = key + r * 0x9E3779B97F4A7C15
    bits    = splitmix64(row_key)
    u       = double(bits >> 11) * 2**-53      # in [0, 1), exact in float64

A CUDA kernel reproduces it bit for bit with ``unsigned long long`` arithmetic
(wrap-around multiply) and ``(double)(bits >> 11) * 0x1.0p-53``, given ``key``
as a kernel argument::

    __device__ double row_uniform(unsigned long long key, unsigned long long r) {
        unsigned long long z = key + r * 0x9E3779B97F4A7C15ULL + 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        return (double)(z >> 11) * 0x1.0p-53;
    }

Array code here uses only operations CuPy also supports on ``uint64`` arrays
(``asarray``, ``arange``, ``astype``, ``+``, ``*``, ``^``, ``>>``), and every
constant is an ``np.uint64`` so that no operand is promoted to another type.
"""

import operator

import numpy as np

#: Additive constant of SplitMix64 (2**64 divided by the golden ratio, odd).
SPLITMIX64_GAMMA = np.uint64(0x9E3779B97F4A7C15)
#: Multipliers of the SplitMix64 output finalizer.
SPLITMIX64_MULTIPLIER_1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX64_MULTIPLIER_2 = np.uint64(0x94D049BB133111EB)
#: Right-shift amounts of the SplitMix64 output finalizer.
SPLITMIX64_SHIFT_1 = np.uint64(30)
SPLITMIX64_SHIFT_2 = np.uint64(27)
SPLITMIX64_SHIFT_3 = np.uint64(31)

#: Mantissa bits of a float64 (including the implicit bit): the uniform keeps
#: the top ``FLOAT64_MANTISSA_BITS`` bits of the 64-bit hash.
FLOAT64_MANTISSA_BITS = 53
#: Width of the hash.
UINT64_BITS = 64
#: Shift that keeps the top 53 of the 64 hash bits.
UNIFORM_DISCARDED_BITS = np.uint64(UINT64_BITS - FLOAT64_MANTISSA_BITS)
#: 2**-53: scales a 53-bit integer into [0, 1) exactly.
UNIFORM_SCALE = float(2.0**-FLOAT64_MANTISSA_BITS)

#: Seeds, stream ids and keys are unsigned 64-bit integers.
UINT64_LIMIT = 2**UINT64_BITS
#: Host seeds are fed to ``numpy.random.SeedSequence`` as 32-bit words.
UINT32_BITS = 32
UINT32_MASK = 2**UINT32_BITS - 1


def _as_uint64_int(value, what):
    """Check that ``value`` is an integer in ``[0, 2**64)`` and return it.

    Parameters
    ----------
    value : int or numpy integer
        The value to check (bool is refused).
    what : str
        Name used in the error message.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If ``value`` is negative or at least ``2**64``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    try:
        as_int = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r}") from None
    if not 0 <= as_int < UINT64_LIMIT:
        raise ValueError(f"{what} must be in [0, 2**64), got {as_int}")
    return as_int


def splitmix64(xp, x):
    """One SplitMix64 step from state ``x``, elementwise (arithmetic mod 2**64).

    Parameters
    ----------
    xp : module
        Array module (``numpy`` or ``cupy``).
    x : array_like of uint64
        Generator states; converted with ``xp.asarray(x, dtype=xp.uint64)``.
        Pass unsigned values (negative Python ints are not accepted by the
        conversion).

    Returns
    -------
    ndarray of uint64
        Same shape as ``x``: ``mix(x + SPLITMIX64_GAMMA)`` with the finalizer
        spelled out in the module docstring.
    """
    states = xp.asarray(x, dtype=xp.uint64)
    # Work on a 1-d view: arithmetic on 0-d arrays yields NumPy scalars, whose
    # (intended) wrap-around would raise overflow warnings.
    z = states.reshape(-1) + SPLITMIX64_GAMMA
    z = (z ^ (z >> SPLITMIX64_SHIFT_1)) * SPLITMIX64_MULTIPLIER_1
    z = (z ^ (z >> SPLITMIX64_SHIFT_2)) * SPLITMIX64_MULTIPLIER_2
    z = z ^ (z >> SPLITMIX64_SHIFT_3)
    return z.reshape(states.shape)


def _splitmix64_scalar(value):
    """:func:`splitmix64` of one Python int, computed with NumPy on the host."""
    return int(splitmix64(np, np.array([value], dtype=np.uint64))[0])


def stream_key(seed, stream):
    """Return the 64-bit key of the stream ``(seed, stream)``.

    ``key = splitmix64(splitmix64(seed) ^ stream)``. For a fixed seed,
    distinct streams give distinct keys (and vice versa), because
    ``splitmix64`` is a bijection. A CUDA kernel takes this key as an
    ``unsigned long long`` argument and derives per-row numbers from it.

    Parameters
    ----------
    seed : int
        User seed, in ``[0, 2**64)``.
    stream : int
        Stream id, e.g. the boosting round (and a purpose tag mixed in by the
        caller), in ``[0, 2**64)``.

    Returns
    -------
    int
        The key, in ``[0, 2**64)``.
    """
    seed = _as_uint64_int(seed, "seed")
    stream = _as_uint64_int(stream, "stream")
    return _splitmix64_scalar(_splitmix64_scalar(seed) ^ stream)


def _uniforms_from_rows(xp, key, rows):
    """Uniforms in [0, 1) of the row ids ``rows`` (integer array) of stream ``key``."""
    # 1-d view for the same reason as in splitmix64.
    rows_uint64 = rows.reshape(-1).astype(xp.uint64)
    row_keys = rows_uint64 * SPLITMIX64_GAMMA + np.uint64(key)
    bits = splitmix64(xp, row_keys)
    uniforms = (bits >> UNIFORM_DISCARDED_BITS).astype(xp.float64) * UNIFORM_SCALE
    return uniforms.reshape(rows.shape)


def row_uniforms(xp, seed, stream, n_rows):
    """One uniform number in [0, 1) for every row ``0 .. n_rows-1``.

    Parameters
    ----------
    xp : module
        Array module (``numpy`` or ``cupy``); the result lives on its device.
    seed : int
        User seed, in ``[0, 2**64)``.
    stream : int
        Stream id, in ``[0, 2**64)``; different streams give independent
        numbers.
    n_rows : int
        Number of rows (>= 0).

    Returns
    -------
    ndarray of float64, shape (n_rows,)
        ``u[r]`` as defined in the module docstring; identical bits on NumPy,
        CuPy and the CUDA formula.
    """
    n_rows = operator.index(n_rows)
    if n_rows < 0:
        raise ValueError(f"n_rows must be >= 0, got {n_rows}")
    key = stream_key(seed, stream)
    return _uniforms_from_rows(xp, key, xp.arange(n_rows, dtype=xp.uint64))


def row_uniforms_at(xp, seed, stream, row_indices):
    """The numbers of :func:`row_uniforms` for a subset of rows.

    ``row_uniforms_at(xp, s, t, idx)`` equals ``row_uniforms(xp, s, t, n)[idx]``
    for any ``n > max(idx)``: a row's number depends on its row id only, not on
    its position in ``row_indices``.

    Parameters
    ----------
    xp : module
        Array module (``numpy`` or ``cupy``).
    seed : int
        User seed, in ``[0, 2**64)``.
    stream : int
        Stream id, in ``[0, 2**64)``.
    row_indices : array_like of int
        Row ids (any integer dtype, e.g. the int32 sample indices), on the
        device of ``xp``. They must be non-negative; this is not checked, to
        avoid a device synchronisation.

    Returns
    -------
    ndarray of float64
        Same shape as ``row_indices``.

    Raises
    ------
    TypeError
        If ``row_indices`` does not have an integer dtype.
    """
    row_indices = xp.asarray(row_indices)
    if row_indices.dtype.kind not in "iu":
        if row_indices.size == 0:
            row_indices = row_indices.astype(xp.int64)
        else:
            raise TypeError(f"row_indices must have an integer dtype, got {row_indices.dtype}")
    key = stream_key(seed, stream)
    return _uniforms_from_rows(xp, key, row_indices)


def _seed_sequence_entropy(values):
    """Encode unsigned 64-bit ints as SeedSequence entropy, without collisions.

    ``SeedSequence`` splits each int into a variable number of 32-bit words and
    pads the entropy with zero words, so ``(3, 1, 2)`` and ``(3, 1, 2, 0)``, or
    ``(2**32,)`` and ``(0, 1)``, would seed identical generators. Writing the
    number of values first and then every value as exactly two 32-bit words
    (low, high) makes distinct tuples give distinct entropy.

    Parameters
    ----------
    values : sequence of int
        Values in ``[0, 2**64)``.

    Returns
    -------
    list of int
        ``[len(values), low(v0), high(v0), low(v1), high(v1), ...]``.
    """
    words = [len(values)]
    for value in values:
        words += [value & UINT32_MASK, value >> UINT32_BITS]
    return words


def host_rng(seed, *stream_ids):
    """A NumPy generator for host-side random choices (e.g. column sampling).

    Parameters
    ----------
    seed : int
        User seed, in ``[0, 2**64)``.
    *stream_ids : int
        Further integers in ``[0, 2**64)`` that name the stream (e.g. a purpose
        tag, the boosting round, the tree depth); distinct tuples
        ``(seed, *stream_ids)`` give independent generators.

    Returns
    -------
    numpy.random.Generator
        ``Generator(PCG64(SeedSequence(entropy)))`` where ``entropy`` encodes
        the tuple ``(seed, *stream_ids)`` unambiguously: its length, then each
        value as two 32-bit words, low word first.
    """
    values = [_as_uint64_int(seed, "seed")]
    values += [_as_uint64_int(stream_id, "stream id") for stream_id in stream_ids]
    entropy = _seed_sequence_entropy(values)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
