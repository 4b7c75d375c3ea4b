"""The Witness: rules as small values (geometry, paths, pieces, puzzles), numba kernels, pictures; never Dask,
Zarr or the runtime."""
