"""Shared sizes; one of them bound under the name the layer module binds too."""

ROWS = 8
CACHE_BLOCKS = ROWS * 4
LAYER_BLOCKS = CACHE_BLOCKS
