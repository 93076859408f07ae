"""cupy._creation: CuPy's internal modules of its creation routines, whose public names are loom's."""
