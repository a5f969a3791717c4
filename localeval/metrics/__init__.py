"""Every metric, by name. Importing a metric module registers it; the order here is the listing order."""

from localeval.metrics import faithfulness, answer_relevancy, answer_completeness  # noqa: F401, I001
from localeval.metrics import context_precision, context_recall, context_relevancy  # noqa: F401
from localeval.metrics import context_entity_recall, answer_similarity, correctness  # noqa: F401
from localeval.metrics import aspect_critique, noise_sensitivity, rubric_score, summarization, lexical  # noqa: F401
from localeval.metrics import grounding_coverage  # noqa: F401
from localeval.metrics.base import METRICS, Metric, MetricProgram, Score, metric

__all__ = ["METRICS", "Metric", "MetricProgram", "Score", "metric"]
