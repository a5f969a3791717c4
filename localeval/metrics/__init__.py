"""Every metric, by name. Importing a metric module registers it."""

from localeval.metrics import faithfulness  # noqa: F401  (registers)
from localeval.metrics.base import METRICS, Metric, MetricProgram, Score, metric

__all__ = ["METRICS", "Metric", "MetricProgram", "Score", "metric"]
