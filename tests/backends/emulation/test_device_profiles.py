"""The emulated device profiles (gpuboost.backends.emulation.device_profiles,
GPUBOOST_EMULATE_DEVICE): the backend reads its limits from the profile, and training
on every profile's launch configurations gives the CPU's bytes (the golden hashes; in the
slow tier, the whole CUDA backend suite on the profiles without clusters)."""

import pytest
import test_golden
from _pytest_child import REPO_ROOT, run_pytest
from _tiers import SLOW, sampled

from gpuboost.backends.cuda.histogram import device_cluster_blocks, device_limits
from gpuboost.backends.cuda.launch import EMULATED
from gpuboost.backends.emulation import emulated_kernels
from gpuboost.backends.emulation.device_profiles import (
    DEFAULT_PROFILE,
    EMULATE_DEVICE_ENV_VAR,
    PROFILES,
    current_profile,
)


def test_the_profile_sets_the_limits_the_backend_reads(monkeypatch):
    monkeypatch.delenv(EMULATE_DEVICE_ENV_VAR, raising=False)
    assert current_profile().key == DEFAULT_PROFILE == "H100"
    expected = {  # SMs, opt-in shared bytes per block, cluster blocks, arch
        "A100": (108, 163 * 1024, 1, "sm_80"),
        "L4": (58, 99 * 1024, 1, "sm_89"),
        "H100": (132, 227 * 1024, 8, "sm_90"),
        "H200": (132, 227 * 1024, 8, "sm_90"),
    }
    assert set(expected) == set(PROFILES)
    for key, (sms, shared, cluster, arch) in expected.items():
        monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, key.lower())  # any case
        assert device_limits(EMULATED) == (sms, shared)
        assert device_cluster_blocks(EMULATED) == cluster
        assert current_profile().arch == arch
    monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, "V100")
    with pytest.raises(ValueError, match="GPUBOOST_EMULATE_DEVICE='V100' is not an emulated"):
        current_profile()


#: Golden configurations trained on each profile in the fast tier (the slow tier: every
#: configuration of test_golden's fast emulated set on every profile).
FAST_CASES = {
    ("A100", "squarederror_depthwise"),
    ("A100", "logistic_sampled"),
    ("L4", "softprob"),
    ("L4", "approx"),
    ("H200", "rank_ndcg"),
}
CASES = [
    (profile, name)
    for profile in ("A100", "L4", "H200")
    for name in sorted(test_golden.EMULATED_IN_THE_FAST_TIER | {"softprob"})
]


@pytest.mark.parametrize("profile, name", sampled(CASES, FAST_CASES, unpack=True))
def test_golden_hashes_on_every_profile(profile, name, monkeypatch):
    """Another SM count, shared-memory limit and no clusters (A100, L4) change the
    histogram plans, row-scan tiles and kernels; the model bytes stay the CPU's."""
    monkeypatch.setenv(EMULATE_DEVICE_ENV_VAR, profile)
    with emulated_kernels():
        assert test_golden._train_and_hash(name, "cuda") == test_golden.GOLDEN[name]


#: The NVRTC compile check (compiles, launches nothing; relative to REPO_ROOT).
NVRTC_CHECK = "tests/backends/cuda/test_nvrtc_compile_check.py"


@SLOW
def test_the_cuda_backend_suite_on_a_device_without_clusters():
    """Every fast test of the CUDA backend (the parity tests of every primitive and
    training, tests/backends/cuda) on a profile without clusters (A100): the per-block kernels,
    an 8.x shared-memory limit and SM count (the tests of the cluster kernels themselves
    pin an H100, the ``clusters`` fixture). The default run is the H100's."""
    status, output = run_pytest(
        [
            REPO_ROOT / "tests" / "backends" / "cuda",
            f"--deselect={NVRTC_CHECK}",
            "-k",
            # the compilers do not see the emulated device
            "not compiles_with_nvcc",
        ],
        {EMULATE_DEVICE_ENV_VAR: "A100"},
    )  # L4: the samples above
    assert status == 0, output[-6000:]
    assert " passed" in output and " failed" not in output
