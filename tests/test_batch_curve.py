"""The curve `localeval doctor` prints for --batch-decode: the choice from it, by hand, and a real measurement."""

import pytest

from localeval.judge.batch_curve import ANSWER_TOKENS, CurvePoint, describe_curve, measure_curve, recommended_batch
from localeval.judge.protocol import JudgeConfig


def curve(*tokens_per_second: float) -> list[CurvePoint]:
    return [CurvePoint(size, int(speed * 10), 10.0) for size, speed in zip((1, 2, 4, 8), tokens_per_second)]


def test_a_gain_under_one_and_a_half_keeps_one_call_at_a_time():
    assert recommended_batch(curve(29.6, 29.3, 36.4, 33.9)) == 1  # measured on a 2-core EPYC: x1.23 at 4


def test_the_fastest_size_is_chosen_where_it_gains_enough():
    assert recommended_batch(curve(20.0, 35.0, 62.0, 58.0)) == 4  # x3.1 at 4 beats x2.9 at 8


def test_the_curve_reads_as_speeds_with_their_gains():
    assert describe_curve(curve(20.0, 35.0, 62.0, 58.0)) == (
        "1: 20.0, 2: 35.0 (x1.75), 4: 62.0 (x3.10), 8: 58.0 (x2.90) answer tokens/s"
    )


@pytest.mark.slow
def test_each_point_times_every_call_of_its_batch_answering_in_full(smollm_path):
    measured = measure_curve(smollm_path, JudgeConfig(n_threads=2))
    assert [p.sequences for p in measured] == [1, 2, 4, 8]
    # the schema asks for at least 200 characters, so every call spends its whole budget
    assert [p.answer_tokens for p in measured] == [ANSWER_TOKENS * n for n in (1, 2, 4, 8)]
    assert all(p.seconds > 0 for p in measured)
