"""Synthetic data sets: ``make_higgs_like`` (the data of ``gpuboost demo`` and of the
benchmarks).

The same bytes on every machine (docs/DESIGN.md, "Platform-independent arithmetic"): the
random stream gives uniform doubles only (``Generator.random``: an integer times
``2**-53``, exact), and everything made of them is basic operations and
:mod:`gpuboost.core.strict_math`'s functions. NumPy's ``sin`` / ``exp`` / ``tanh`` and
the generator's ``normal`` / ``lognormal`` (the C library's ``exp`` and ``log`` in some
paths) differ between CPUs (NumPy picks SIMD loops at run time), C libraries and builds:
data made with them would differ in the last bits of some values, and so the bin edges,
the models and the demo's figures of two machines.
"""

import numpy as np

from .core import strict_math
from .core.dtypes import X_DTYPE

__all__ = ["make_higgs_like", "HIGGS_FEATURES"]

#: Rows generated per random stream; chunk ``i`` always uses stream ``(seed, i)``,
#: so a data set is the same for a seed whatever its total size (prefixes agree).
GENERATOR_CHUNK_ROWS = 1 << 16
#: Features of the HIGGS layout: 21 low-level (kinematic) then 7 high-level (masses).
HIGGS_LOW_LEVEL_FEATURES = 21
HIGGS_HIGH_LEVEL_FEATURES = 7
HIGGS_FEATURES = HIGGS_LOW_LEVEL_FEATURES + HIGGS_HIGH_LEVEL_FEATURES
N_JETS = 4
#: Pseudorapidities are normal with this spread (jets wider than the lepton),
#: clipped to the detector acceptance |eta| <= ETA_LIMIT.
LEPTON_ETA_SCALE = 1.0
JET_ETA_SCALE = 1.2
ETA_LIMIT = 2.5
#: Transverse momenta are log-normal: positive and right-skewed.
LEPTON_PT_LOG_SCALE = 0.5
MISSING_ENERGY_LOG_SCALE = 0.6
JET_PT_LOG_SCALE = 0.5
#: Leading jet log-momentum and the drop from one jet to the next.
LEADING_JET_LOG_PT = 0.2
JET_LOG_PT_STEP = 0.15
#: b-tag values and their probabilities (HIGGS has three distinct values).
BTAG_VALUES = (0.0, 1.1, 2.2)
BTAG_PROBABILITIES = (0.6, 0.2, 0.2)
#: Their running sums (a value is the first whose sum exceeds a uniform draw).
BTAG_CUMULATIVE = tuple(np.cumsum(BTAG_PROBABILITIES)[:-1])
#: The signal score: resonance bumps in log-mass (center, width, weight) of the
#: b-jet pair and of the two leading jets, plus b-tag, angle and W-mass terms.
BB_RESONANCE = (1.6, 0.35, 2.0)
JJ_RESONANCE = (2.0, 0.35, 1.5)
BTAG_WEIGHT = 0.5
LEPTON_MISSING_ANGLE_WEIGHT = 0.7
#: The angle term counts only for leptons with a transverse momentum above this.
HARD_LEPTON_PT = 1.0
LV_MASS_WEIGHT = 0.5
LV_MASS_CENTER = 1.2
#: Scale of the centered score before the logistic link; the labels are drawn
#: from Bernoulli(sigmoid(score)), so the best possible test AUC is about 0.84.
SIGNAL_SCALE = 1.6
#: The score is centered by this constant (its approximate median), so the
#: classes are about balanced.
SIGNAL_SCORE_CENTER = 1.7


def _uniform(rng, low, high, n_rows):
    """Uniform on ``[low, high)``: ``low + (high - low) u``, ``u`` a uniform double."""
    return low + (high - low) * rng.random(n_rows)


def _standard_normal(rng, size):
    """Standard normal values from ``rng``'s uniform doubles by the Box-Muller transform,
    ``sqrt(-2 log(1 - u)) cos(2 pi v)``, with :mod:`gpuboost.core.strict_math`'s ``log``
    and ``cos``: the same bits on every machine, unlike ``Generator.normal``."""
    radius = np.sqrt(-2.0 * strict_math.log(np, 1.0 - rng.random(size)))
    return radius * strict_math.cos(np, (2.0 * np.pi) * rng.random(size))


def _cosh_sinh(x):
    """``(cosh(x), sinh(x))`` as ``(e + 1/e) / 2`` and ``(e - 1/e) / 2``, ``e =
    exp(x)`` (strict; absolute error about 1e-16, enough for the pseudorapidities)."""
    e = strict_math.exp(np, x)
    inverse = 1.0 / e
    return 0.5 * (e + inverse), 0.5 * (e - inverse)


def _tanh(x):
    """``tanh(x) = sign(x) (1 - t) / (1 + t)``, ``t = exp(-2 |x|)`` (strict, no overflow)."""
    t = strict_math.exp(np, -2.0 * np.abs(x))
    return np.copysign((1.0 - t) / (1.0 + t), x)


def _particle(rng, n_rows, log_pt_mean, log_pt_scale, eta_scale):
    """(pt, eta, phi) of ``n_rows`` massless particles."""
    pt = strict_math.exp(np, log_pt_mean + log_pt_scale * _standard_normal(rng, n_rows))
    eta = np.clip(eta_scale * _standard_normal(rng, n_rows), -ETA_LIMIT, ETA_LIMIT)
    phi = _uniform(rng, -np.pi, np.pi, n_rows)
    return pt, eta, phi


def _four_momentum(pt, eta, phi):
    """(E, px, py, pz) of a massless particle: ``pt cosh(eta)``, ``pt cos(phi)``,
    ``pt sin(phi)``, ``pt sinh(eta)``."""
    cosh, sinh = _cosh_sinh(eta)
    sin, cos = strict_math.sin_cos(np, phi)
    return np.stack([pt * cosh, pt * cos, pt * sin, pt * sinh])


def _invariant_mass(four_momenta):
    """Invariant mass ``sqrt(E**2 - px**2 - py**2 - pz**2)`` of a sum of four-momenta."""
    energy, px, py, pz = sum(four_momenta)
    return np.sqrt(np.maximum(energy * energy - px * px - py * py - pz * pz, 0.0))


def _log_mass_bump(mass, center, width):
    """A resonance peak: ``exp(-((log(mass) - log(center)) / width)**2)`` (0 at mass 0)."""
    distance = (strict_math.log(np, mass) - strict_math.log(np, center)) / width
    return strict_math.exp(np, -(distance * distance))


def _higgs_like_chunk(rng, n_rows):
    """One chunk: features (n_rows, HIGGS_FEATURES) and labels (n_rows,)."""
    lepton = _particle(rng, n_rows, 0.0, LEPTON_PT_LOG_SCALE, LEPTON_ETA_SCALE)
    missing_energy = strict_math.exp(np, MISSING_ENERGY_LOG_SCALE * _standard_normal(rng, n_rows))
    missing_phi = _uniform(rng, -np.pi, np.pi, n_rows)
    # Missing energy is transverse: a particle at eta = 0 for the masses.
    missing = (missing_energy, np.zeros(n_rows), missing_phi)
    jets, btags = [], []
    for jet_index in range(N_JETS):
        jets.append(
            _particle(
                rng,
                n_rows,
                LEADING_JET_LOG_PT - JET_LOG_PT_STEP * jet_index,
                JET_PT_LOG_SCALE,
                JET_ETA_SCALE,
            )
        )
        drawn = np.searchsorted(BTAG_CUMULATIVE, rng.random(n_rows), side="right")
        btags.append(np.asarray(BTAG_VALUES)[drawn])

    lepton_p, missing_p = _four_momentum(*lepton), _four_momentum(*missing)
    jet_p = [_four_momentum(*jet) for jet in jets]
    mass_jj = _invariant_mass(jet_p[:2])
    mass_jjj = _invariant_mass(jet_p[:3])
    mass_lv = _invariant_mass([lepton_p, missing_p])
    mass_jlv = _invariant_mass([jet_p[0], lepton_p, missing_p])
    mass_bb = _invariant_mass(jet_p[2:])
    mass_wbb = _invariant_mass(jet_p)
    mass_wwbb = _invariant_mass(jet_p + [lepton_p, missing_p])

    score = (
        BB_RESONANCE[2] * _log_mass_bump(mass_bb, *BB_RESONANCE[:2])
        + JJ_RESONANCE[2] * _log_mass_bump(mass_jj, *JJ_RESONANCE[:2])
        + BTAG_WEIGHT * (btags[2] + btags[3]) / max(BTAG_VALUES)
        + LEPTON_MISSING_ANGLE_WEIGHT
        * strict_math.cos(np, lepton[2] - missing_phi)
        * (lepton[0] > HARD_LEPTON_PT)
        + LV_MASS_WEIGHT * _tanh(mass_lv - LV_MASS_CENTER)
    )
    logit = SIGNAL_SCALE * (score - SIGNAL_SCORE_CENTER)
    label = rng.random(n_rows) < 1.0 / (1.0 + strict_math.exp(np, -logit))

    columns = [*lepton, missing_energy, missing_phi]
    for jet, btag in zip(jets, btags):
        columns.extend([*jet, btag])
    columns.extend([mass_jj, mass_jjj, mass_lv, mass_jlv, mass_bb, mass_wbb, mass_wwbb])
    return np.column_stack(columns), label


def make_higgs_like(n_rows, n_features=HIGGS_FEATURES, seed=0):
    """A synthetic binary classification data set shaped like HIGGS.

    The first 21 columns are "low-level" kinematics of a lepton, the missing
    energy and four jets (log-normal transverse momenta, clipped normal
    pseudorapidities, angles uniform in [-pi, pi], three-valued b-tags); the
    next 7 are "high-level" invariant masses of particle groups. The label is
    drawn from ``Bernoulli(sigmoid(score))`` with a nonlinear score (mass
    resonances, b-tags, an angle interaction), so the classes overlap: the
    best achievable AUC is about 0.84. With ``n_features < 28`` the first
    columns are kept; beyond 28, pure-noise standard normal columns follow.

    Rows are generated in chunks of ``GENERATOR_CHUNK_ROWS``, each from its own
    random stream ``(seed, chunk index)``: row ``i`` depends only on ``seed``
    and ``n_features`` (a larger data set extends a smaller one), and the
    memory used beyond the output is that of one chunk.

    Parameters
    ----------
    n_rows : int
    n_features : int, default=28
    seed : int, default=0

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), float64
    y : ndarray of shape (n_rows,), float64 in {0, 1}
    """
    if n_rows < 1 or n_features < 1:
        raise ValueError(
            f"need at least one row and one feature, got n_rows={n_rows}, n_features={n_features}."
        )
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}.")
    X = np.empty((n_rows, n_features), dtype=X_DTYPE)
    y = np.empty(n_rows, dtype=X_DTYPE)
    kept = min(n_features, HIGGS_FEATURES)
    for chunk_index, begin in enumerate(range(0, n_rows, GENERATOR_CHUNK_ROWS)):
        end = min(begin + GENERATOR_CHUNK_ROWS, n_rows)
        rng = np.random.default_rng([seed, chunk_index])
        # Always a whole chunk, cut afterwards: row i is the same for every n_rows > i.
        features, label = _higgs_like_chunk(rng, GENERATOR_CHUNK_ROWS)
        n_chunk = end - begin
        X[begin:end, :kept] = features[:n_chunk, :kept]
        if n_features > kept:
            noise = _standard_normal(rng, (GENERATOR_CHUNK_ROWS, n_features - kept))
            X[begin:end, kept:] = noise[:n_chunk]
        y[begin:end] = label[:n_chunk]
    return X, y
