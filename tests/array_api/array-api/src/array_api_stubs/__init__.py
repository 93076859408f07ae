from . import _2024_12
