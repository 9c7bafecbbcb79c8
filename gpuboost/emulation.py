"""Compatibility: ``gpuboost.emulation`` moved to :mod:`gpuboost.backends.emulation` (the
package layout of docs/DESIGN.md); this module re-exports its public names."""

from .backends.emulation import EMULATE_ENV_VAR, emulated_kernels, emulation_enabled

__all__ = ["EMULATE_ENV_VAR", "emulated_kernels", "emulation_enabled"]
