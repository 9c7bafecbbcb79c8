"""The contracts of docs/DESIGN.md as code: dtypes, fixed-point quantization, the
counter-based RNG, the gain formulas, segments, array-module helpers, threads,
phase timings and the file lock of the compile caches. Depends on nothing else in the package."""
