"""The NumPy array types measurement computes with: codes and counts, and values."""

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "IntArray"]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
