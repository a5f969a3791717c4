"""Stand-in answers for the dry run: valid for every step's schema, on each prompt file's own example inputs."""

import pytest

from localeval.run.stand_in import stand_in, statements
from localeval.steps import STEPS
from localeval.steps.prompts import PromptLibrary


@pytest.mark.parametrize("step", sorted(STEPS))
@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_every_step_gets_an_answer_its_schema_accepts(step, lang):
    inputs = PromptLibrary().get(step, lang).examples[0].inputs
    answer = stand_in(step, inputs)
    STEPS[step].output.model_validate(answer)
    schema = STEPS[step].json_schema(inputs)["properties"]
    if aligned := STEPS[step].aligned:
        assert len(answer[aligned.output_field]) == aligned.count(inputs)
    if restates := STEPS[step].restates:
        assert all(len(s) <= restates.max_chars(inputs) for s in answer[restates.output_field])
    assert set(answer) <= set(schema)


def test_a_sentence_is_cut_into_its_statements_in_order():
    sentence = " ".join(f"w{i}" for i in range(51))  # 51 words: 3 statements, the first one word longer
    assert statements(sentence) == [
        " ".join(f"w{i}" for i in range(0, 17)),
        " ".join(f"w{i}" for i in range(17, 34)),
        " ".join(f"w{i}" for i in range(34, 51)),
    ]
    assert statements("Paris is the capital of France.") == ["Paris is the capital of France."]
    assert statements("東京は日本の首都です。") == ["東京は日本の首都です。"]
