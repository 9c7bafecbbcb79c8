"""Compatibility: ``gpuboost.model_io`` moved to :mod:`gpuboost.model.model_io`
(the package layout of docs/DESIGN.md); this module re-exports its public names."""

from .model.model_io import (
    FORMAT_NAME,
    FORMAT_VERSION,
    atomic_write_text,
    state_from_json,
    state_to_json,
    validate_tree_dict,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "atomic_write_text",
    "state_from_json",
    "state_to_json",
    "validate_tree_dict",
]
