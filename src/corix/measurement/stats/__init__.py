"""Statistics with no corix concept in them: Wilson intervals, the cluster bootstrap,
sample-size formulas, and the array types they compute with.
"""

from corix.measurement.stats.arrays import FloatArray, IntArray
from corix.measurement.stats.bootstrap import (
    Resample,
    cluster_resamples,
    expanded_percentile_interval,
    few_testers_warning,
    percentile_interval,
    resampled_unit,
)
from corix.measurement.stats.sample_size import (
    DEFAULT_ASSURANCE,
    design_effect,
    icc_anova,
    n_for_assured_width,
    n_for_difference,
    n_for_width,
)
from corix.measurement.stats.wilson import wilson_cc_arrays, wilson_cc_bounds

__all__ = [
    "DEFAULT_ASSURANCE",
    "FloatArray",
    "IntArray",
    "Resample",
    "cluster_resamples",
    "design_effect",
    "expanded_percentile_interval",
    "few_testers_warning",
    "icc_anova",
    "n_for_assured_width",
    "n_for_difference",
    "n_for_width",
    "percentile_interval",
    "resampled_unit",
    "wilson_cc_arrays",
    "wilson_cc_bounds",
]
