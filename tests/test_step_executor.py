"""Tests for localeval.run.step_executor: parsing, every failure reason, retries, sampling and the call cache.

The judge is a FakeJudge (tests/fakes.py): these tests check plumbing and injected faults, not a model.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from fakes import FakeBatchJudge, FakeJudge, JudgeCall, answer, as_json

from localeval.judge.protocol import CallUsage, ContextOverflow, JudgeConfig
from localeval.run.step_executor import (
    CallCache,
    StepExecutor,
    StepOutcome,
    parse_json_answer,
)
from localeval.steps import STEPS, Call
from localeval.steps.prompts import PromptLibrary
from localeval.steps.statements import Statements
from localeval.steps.verdicts import SupportVerdict

CONFIG = JudgeConfig(seed=7, temperature=0.0, vote_temperature=0.9)
SUPPORT = Call.of(
    "statement_support", retrieved_contexts=["Paris is the capital of France."], statement="Paris is in France."
)
SUPPORTED = '{"verdict": 1}'


def executor(
    judge: FakeJudge, cache: CallCache | None = None, judge_id: str = "judge-sha", prompts: PromptLibrary | None = None
) -> StepExecutor:
    return StepExecutor(judge, judge_id, prompts or PromptLibrary(), CONFIG, cache)


def expected_call(call: Call, max_tokens: int, seed: int = 7, temperature: float = 0.0) -> JudgeCall:
    inputs = call.input_dict()
    messages = PromptLibrary().get(call.step, "en").messages(inputs)
    return JudgeCall(messages, STEPS[call.step].json_schema(inputs), max_tokens, seed, temperature)


# --- parse_json_answer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"reason": "ok", "verdict": 1}', {"reason": "ok", "verdict": 1}),
        ('Sure! Here it is:\n```json\n{"verdict": 0}\n```\nHope this helps.', {"verdict": 0}),
        ('{"a": {"b": [1, 2]}}', {"a": {"b": [1, 2]}}),
        ('{"reason": "line one\nline two\ttab", "verdict": 1}', {"reason": "line one\nline two\ttab", "verdict": 1}),
        ('{"reason": "東京", "verdict": 1}', {"reason": "東京", "verdict": 1}),
    ],
)
def test_parse_json_answer(text, expected):
    assert parse_json_answer(text) == expected


@pytest.mark.parametrize("text", ["", "no object here", "[1, 2]", "} backwards {", '{"reason": "cut', '{"a": 1,}'])
def test_parse_json_answer_without_an_object(text):
    assert parse_json_answer(text) is None


# --- one call ----------------------------------------------------------------------------------


def test_valid_answer_becomes_the_output():
    judge = FakeJudge([answer(SUPPORTED, prompt_tokens=321, completion_tokens=17, seconds=0.25)])
    outcome = executor(judge).run(SUPPORT, "en")
    assert outcome == StepOutcome(
        SupportVerdict(verdict=1), usage=CallUsage(prompt_tokens=321, completion_tokens=17, seconds=0.25, attempts=1)
    )
    assert judge.calls == [expected_call(SUPPORT, max_tokens=16)]


def test_answer_with_prose_around_it_is_accepted():
    judge = FakeJudge(["Answer: " + SUPPORTED + " (done)"])
    assert executor(judge).run(SUPPORT, "en").output == SupportVerdict(verdict=1)


def test_malformed_answer_is_unparseable():
    judge = FakeJudge([answer("I think it is supported.", prompt_tokens=50, completion_tokens=6, seconds=0.1)])
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(
        None, "judge_unparseable", "I think it is supported.", CallUsage(50, 6, 0.1, 1)
    )


def test_unparseable_detail_is_cut_to_200_characters():
    judge = FakeJudge(["x" * 300])
    outcome = executor(judge).run(SUPPORT, "en")
    assert (outcome.failure, outcome.detail) == ("judge_unparseable", "x" * 200)


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"verdict": 2}', "Input should be 0 or 1"),
        ('{"reason": "It says so."}', "Field required"),
    ],
)
def test_answer_violating_the_schema_is_invalid(text, detail):
    judge = FakeJudge([answer(text, prompt_tokens=50, completion_tokens=6, seconds=0.1)])
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(None, "judge_invalid", detail, CallUsage(50, 6, 0.1, 1))


def test_judge_exception_is_judge_error_naming_the_type():
    judge = FakeJudge([RuntimeError("llama_decode returned -3")])
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(
        None, "judge_error", "RuntimeError: llama_decode returned -3"
    )


def test_judge_timeout():
    judge = FakeJudge([TimeoutError("no answer after 60 s")])
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(None, "judge_timeout", "no answer after 60 s")


def overflowing_past(limit: int):
    """A judge whose window holds `limit` characters of prompt (a stand-in for its tokens)."""

    def respond(call: JudgeCall):
        size = sum(len(m["content"]) for m in call.messages)
        return ContextOverflow(size, call.max_tokens, limit) if size > limit else SUPPORTED

    return respond


def test_a_prompt_too_long_is_cut_to_the_window_and_the_cut_recorded():
    contexts = [f"Sentence {i} is about topic {i}." for i in range(400)] + ["Paris is the capital of France."]
    call = Call.of("statement_support", retrieved_contexts=contexts, statement="Paris is in France.")
    full = sum(len(m["content"]) for m in PromptLibrary().get("statement_support", "en").messages(call.input_dict()))
    judge = FakeJudge(respond=overflowing_past(full // 2), n_ctx=full // 2 + 16)
    outcome = executor(judge).run(call, "en")
    assert outcome.output == SupportVerdict(verdict=1)
    assert outcome.cut.input_name == "retrieved_contexts"
    assert outcome.cut.kept_chars < outcome.cut.total_chars == sum(map(len, contexts))
    assert "Paris is the capital of France." in judge.calls[-1].last_user  # the sentence that matters stayed
    assert 2 <= len(judge.calls) <= 7  # each try before the last costs a tokenization, not an evaluation


def test_a_fitted_answer_is_reused_only_for_the_same_window(tmp_path):
    contexts = [f"Sentence {i} is about topic {i}." for i in range(400)]
    call = Call.of("statement_support", retrieved_contexts=contexts, statement="Topic 7.")
    cache = CallCache(tmp_path / "calls.jsonl")
    executor(FakeJudge(respond=overflowing_past(6000), n_ctx=6160), cache).run(call, "en")
    same = FakeJudge(n_ctx=6160)
    assert executor(same, CallCache(tmp_path / "calls.jsonl")).run(call, "en").cut.input_name == "retrieved_contexts"
    assert same.calls == []
    wider = FakeJudge(respond=overflowing_past(9000), n_ctx=9160)
    executor(wider, CallCache(tmp_path / "calls.jsonl")).run(call, "en")
    assert wider.calls


def test_context_overflow_where_even_the_fixed_part_does_not_fit():
    judge = FakeJudge(respond=overflowing_past(100), n_ctx=260)
    run = executor(judge)
    outcome = run.run(SUPPORT, "en")
    assert outcome.failure == "context_overflow"
    assert outcome.detail.startswith("prompt needs 1647 tokens plus 16 for the answer; context is 260; ")
    assert outcome.detail.endswith("even cut to retrieved_contexts: the sentences closest to statement, it did not fit")
    tries = len(judge.calls)
    assert run.run(SUPPORT, "en").failure == "context_overflow"
    assert len(judge.calls) == 2 * tries and len(run.cache) == 0  # a larger window may fit it: never cached


def test_keyboard_interrupt_is_not_swallowed():
    judge = FakeJudge([KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        executor(judge).run(SUPPORT, "en")


# --- truncation and retry ----------------------------------------------------------------------


def test_truncated_then_ok_retries_at_twice_the_budget():
    judge = FakeJudge(
        [
            answer('{"verd', prompt_tokens=300, completion_tokens=16, seconds=1.0, truncated=True),
            answer(SUPPORTED, prompt_tokens=300, completion_tokens=5, seconds=0.5),
        ]
    )
    outcome = executor(judge).run(SUPPORT, "en")
    assert outcome == StepOutcome(
        SupportVerdict(verdict=1), usage=CallUsage(prompt_tokens=600, completion_tokens=21, seconds=1.5, attempts=2)
    )
    assert [call.max_tokens for call in judge.calls] == [16, 32]
    assert judge.calls[0].messages == judge.calls[1].messages
    assert judge.calls[0].schema == judge.calls[1].schema


def test_truncated_twice():
    judge = FakeJudge(
        [answer("{", completion_tokens=16, truncated=True), answer("{", completion_tokens=32, truncated=True)]
    )
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(
        None, "judge_truncated", "answer exceeded 32 tokens", CallUsage(200, 48, 1.0, 2)
    )
    assert [call.max_tokens for call in judge.calls] == [16, 32]


def test_truncated_then_context_overflow_is_truncated():
    judge = FakeJudge([answer("{", completion_tokens=16, truncated=True), ContextOverflow(4090, 32, 4096)], n_ctx=4096)
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(
        None,
        "judge_truncated",
        "answer exceeded 16 tokens; no room for 32 in a context of 4096",
        CallUsage(100, 16, 0.5, 1),
    )


def test_truncated_then_error():
    judge = FakeJudge([answer("{", truncated=True), ValueError("bad state")])
    assert executor(judge).run(SUPPORT, "en") == StepOutcome(
        None, "judge_error", "ValueError: bad state", CallUsage(100, 10, 0.5, 1)
    )


# --- per-call schemas: "statements" (bounded by its sentence), "questions" (aligned with its count) ----------


def test_statements_schema_and_budget_follow_the_sentence_length():
    text = "Paris is big. It is old. Hello!"
    call = Call.of("statements", user_input="Tell me about Paris.", text=text, sentence="It is old.")
    judge = FakeJudge([as_json({"statements": ["Paris is old."]})])
    outcome = executor(judge).run(call, "en")
    assert outcome.output == Statements(statements=["Paris is old."])
    [sent] = judge.calls
    assert sent.max_tokens == 96 + 3 * 10
    assert sent.schema == {
        "properties": {
            "statements": {
                "items": {"maxLength": 10 + 40, "minLength": 1, "type": "string"},
                "maxItems": 6,
                "title": "Statements",
                "type": "array",
            }
        },
        "required": ["statements"],
        "title": "Statements",
        "type": "object",
    }
    assert sent.messages[-1] == {
        "role": "user",
        "content": (
            "Question: Tell me about Paris.\nAnswer: Paris is big. It is old. Hello!\n\nSentence to rewrite: It is old."
        ),
    }
    # The step's own schema is left as it was.
    assert STEPS["statements"].json_schema()["properties"]["statements"]["items"]["maxLength"] == 300


def test_a_long_sentence_keeps_the_statement_type_limit():
    sentence = "word " * 80  # 400 characters: 400 + 40 is above the type's 300
    judge = FakeJudge(['{"statements": ["A."]}'])
    executor(judge).run(Call.of("statements", user_input="Q", text=sentence, sentence=sentence), "en")
    [sent] = judge.calls
    assert (sent.max_tokens, sent.schema["properties"]["statements"]["items"]["maxLength"]) == (96 + 1200, 300)


def test_questions_schema_and_budget_follow_the_count():
    judge = FakeJudge(['{"questions": ["A?", "B?", "C?"], "noncommittal": 0}'])
    executor(judge).run(Call.of("questions", response="Paris is big.", count="3"), "en")
    [sent] = judge.calls
    questions = sent.schema["properties"]["questions"]
    assert (sent.max_tokens, questions["minItems"], questions["maxItems"]) == (24 + 70 * 3, 3, 3)
    assert "minItems" not in STEPS["questions"].json_schema()["properties"]["questions"]


# --- sampling ----------------------------------------------------------------------------------


def test_vote_zero_uses_config_seed_and_temperature_other_votes_their_own():
    judge = FakeJudge([SUPPORTED, SUPPORTED, SUPPORTED])
    run = executor(judge)
    run.run(Call.of("statement_support", vote=0, **SUPPORT.input_dict()), "en")
    run.run(Call.of("statement_support", vote=2, **SUPPORT.input_dict()), "en")
    run.run(Call.of("statement_support", vote=1, **SUPPORT.input_dict()), "en")
    assert [(call.seed, call.temperature) for call in judge.calls] == [(7, 0.0), (9, 0.9), (8, 0.9)]


# --- the call cache ----------------------------------------------------------------------------


def test_identical_calls_hit_the_cache():
    judge = FakeJudge([SUPPORTED])
    run = executor(judge)
    first = run.run(SUPPORT, "en")
    second = run.run(
        Call.of(
            "statement_support",
            statement="Paris is in France.",
            retrieved_contexts=("Paris is the capital of France.",),
        ),
        "en",
    )
    assert len(judge.calls) == 1
    assert first.usage == CallUsage(100, 10, 0.5, 1, cached=False)
    assert second == StepOutcome(SupportVerdict(verdict=1), usage=CallUsage(cached=True))


@pytest.mark.parametrize(
    "fault",
    [TimeoutError("slow"), RuntimeError("GPU lost")],
    ids=["judge_timeout", "judge_error"],
)
def test_failures_that_depend_on_the_machine_are_not_cached(fault):
    judge = FakeJudge([fault, SUPPORTED])
    run = executor(judge)
    assert run.run(SUPPORT, "en").output is None
    assert run.run(SUPPORT, "en") == StepOutcome(SupportVerdict(verdict=1), usage=CallUsage(100, 10, 0.5, 1))
    assert len(judge.calls) == 2
    assert len(run.cache) == 1


@pytest.mark.parametrize(
    ("replies", "failure", "detail"),
    [
        (["no json"], "judge_unparseable", "no json"),
        (['{"reason": "r", "verdict": 2}'], "judge_invalid", "Input should be 0 or 1"),
        ([answer("{", truncated=True), answer("{", truncated=True)], "judge_truncated", "answer exceeded 32 tokens"),
    ],
)
def test_failures_that_greedy_decoding_would_repeat_are_cached(tmp_path, replies, failure, detail):
    path = tmp_path / "judge_calls.jsonl"
    judge = FakeJudge(replies)
    run = executor(judge, CallCache(path))
    assert (run.run(SUPPORT, "en").failure, len(judge.calls)) == (failure, len(replies))
    assert run.run(SUPPORT, "en") == StepOutcome(None, failure, detail, CallUsage(cached=True))
    assert len(judge.calls) == len(replies)
    assert json.loads(path.read_text(encoding="utf-8"))["entry"] == {"failure": failure, "detail": detail}
    reloaded = FakeJudge()
    assert executor(reloaded, CallCache(path)).run(SUPPORT, "en") == StepOutcome(
        None, failure, detail, CallUsage(cached=True)
    )
    assert reloaded.calls == []


@pytest.mark.parametrize("stale", ["judge_timeout", "judge_gone"])
def test_a_cached_failure_that_is_not_a_repeatable_one_is_a_miss(tmp_path, stale):
    """An edited or older cache file must not bring back a failure that would be retried, or an unknown reason."""
    path = tmp_path / "judge_calls.jsonl"
    executor(FakeJudge(["no json"]), CallCache(path)).run(SUPPORT, "en")
    path.write_text(path.read_text(encoding="utf-8").replace("judge_unparseable", stale), encoding="utf-8")
    judge = FakeJudge([SUPPORTED])
    assert executor(judge, CallCache(path)).run(SUPPORT, "en").output == SupportVerdict(verdict=1)
    assert len(judge.calls) == 1


@pytest.mark.parametrize(
    "other",
    [
        Call.of("statement_support", retrieved_contexts=["Paris is the capital of France."], statement="Paris."),
        Call.of(
            "statement_support",
            retrieved_contexts=["Paris is the capital of France.", "More."],
            statement="Paris is in France.",
        ),
        Call.of(
            "statement_support",
            vote=1,
            retrieved_contexts=["Paris is the capital of France."],
            statement="Paris is in France.",
        ),
    ],
)
def test_different_calls_miss_the_cache(other):
    judge = FakeJudge([SUPPORTED, SUPPORTED])
    run = executor(judge)
    run.run(SUPPORT, "en")
    assert run.run(other, "en").usage.cached is False
    assert len(judge.calls) == 2


def test_another_judge_misses_the_cache():
    cache = CallCache()
    executor(FakeJudge([SUPPORTED]), cache, judge_id="sha-a").run(SUPPORT, "en")
    judge = FakeJudge([SUPPORTED])
    assert executor(judge, cache, judge_id="sha-b").run(SUPPORT, "en").usage.cached is False
    assert len(judge.calls) == 1
    assert len(cache) == 2


def test_an_edited_prompt_misses_the_cache_and_an_edited_comment_does_not(tmp_path):
    cache = CallCache()
    executor(FakeJudge([SUPPORTED]), cache).run(SUPPORT, "en")
    shipped = PromptLibrary().path("statement_support", "en").read_text(encoding="utf-8")
    override = tmp_path / "en" / "statement_support.toml"
    override.parent.mkdir()
    override.write_text(shipped + "\n# a comment the judge never reads\n", encoding="utf-8")
    assert executor(FakeJudge(), cache, prompts=PromptLibrary(tmp_path)).run(SUPPORT, "en").usage.cached is True
    override.write_text(shipped.replace("careful fact-checker", "very careful fact-checker"), encoding="utf-8")
    judge = FakeJudge([SUPPORTED])
    assert executor(judge, cache, prompts=PromptLibrary(tmp_path)).run(SUPPORT, "en").usage.cached is False
    assert len(judge.calls) == 1


class WithNote(SupportVerdict):
    note: str | None = None


@pytest.mark.parametrize("change", [{"max_tokens": 999}, {"output": WithNote}])
def test_a_changed_token_budget_or_schema_misses_the_cache(monkeypatch, change):
    """A new localeval version may change a step's grammar or budget; its answers must not come from old ones."""
    cache = CallCache()
    executor(FakeJudge([SUPPORTED]), cache).run(SUPPORT, "en")
    monkeypatch.setitem(STEPS, "statement_support", dataclasses.replace(STEPS["statement_support"], **change))
    judge = FakeJudge([SUPPORTED])
    assert executor(judge, cache).run(SUPPORT, "en").usage.cached is False
    assert len(judge.calls) == 1


def test_cache_persists_to_jsonl_and_a_new_cache_serves_the_call(tmp_path):
    path = tmp_path / "judge_calls.jsonl"
    executor(FakeJudge([SUPPORTED]), CallCache(path)).run(SUPPORT, "en")
    [line] = path.read_text(encoding="utf-8").split("\n")[:-1]
    entry = json.loads(line)
    assert sorted(entry) == ["entry", "key"]
    assert len(entry["key"]) == 64 and set(entry["key"]) <= set("0123456789abcdef")
    assert entry["entry"] == {"output": {"verdict": 1}}

    judge = FakeJudge()  # any call would fail the test
    reloaded = CallCache(path)
    assert len(reloaded) == 1
    assert executor(judge, reloaded).run(SUPPORT, "en") == StepOutcome(
        SupportVerdict(verdict=1), usage=CallUsage(cached=True)
    )
    assert judge.calls == []


def test_cache_ignores_a_line_cut_short(tmp_path):
    path = tmp_path / "judge_calls.jsonl"
    executor(FakeJudge([SUPPORTED]), CallCache(path)).run(SUPPORT, "en")
    with path.open("a", encoding="utf-8") as file:
        file.write('{"key": "0123", "entry": {"output": {"reason": "cut sh')
    cache = CallCache(path)
    assert len(cache) == 1
    judge = FakeJudge()
    assert executor(judge, cache).run(SUPPORT, "en").usage.cached is True
    assert judge.calls == []


def test_cache_ignores_lines_that_are_not_entries(tmp_path):
    path = tmp_path / "judge_calls.jsonl"
    path.write_text('\n[1, 2]\n{"key": "k"}\n"text"\n{"key": "a", "entry": {"output": {"x": 1}}}\n', encoding="utf-8")
    cache = CallCache(path)
    assert len(cache) == 1
    assert cache.get("a") == {"output": {"x": 1}}
    assert cache.get("k") is None


def test_cache_entry_after_a_line_cut_short_starts_on_its_own_line(tmp_path):
    path = tmp_path / "judge_calls.jsonl"
    path.write_text('{"key": "a", "entry": {"x": 1}}\n{"key": "b", "entr', encoding="utf-8")
    cache = CallCache(path)
    cache.put("c", {"x": 3})
    cache.put("d", {"x": 4})
    assert path.read_text(encoding="utf-8") == (
        '{"key": "a", "entry": {"x": 1}}\n{"key": "b", "entr\n'
        '{"key": "c", "entry": {"x": 3}}\n{"key": "d", "entry": {"x": 4}}\n'
    )
    reloaded = CallCache(path)
    assert [reloaded.get(key) for key in ("a", "b", "c", "d")] == [{"x": 1}, None, {"x": 3}, {"x": 4}]


def test_cache_keeps_line_separator_characters_inside_outputs(tmp_path):
    path = tmp_path / "judge_calls.jsonl"
    CallCache(path).put("a", {"reason": "one\u2028two\x85three", "verdict": 1})
    assert CallCache(path).get("a") == {"reason": "one\u2028two\x85three", "verdict": 1}


def test_cache_without_a_file_keeps_calls_in_memory_and_writes_nothing(tmp_path, monkeypatch):
    """Run from an empty folder: a default or relative cache file would appear in it."""
    monkeypatch.chdir(tmp_path)
    cache = CallCache()
    cache.put("a", {"x": 1})
    assert (cache.path, len(cache), cache.get("a"), cache.get("b")) == (None, 1, {"x": 1}, None)
    run = executor(FakeJudge([SUPPORTED]))  # its own cache, also without a file
    assert [run.run(SUPPORT, "en").usage.cached for _ in range(2)] == [False, True]
    assert list(tmp_path.iterdir()) == []


# --- the judge's probability for a verdict -------------------------------------------------------


def test_the_last_binary_choice_becomes_the_verdicts_probability(tmp_path):
    cache = CallCache(tmp_path / "calls.jsonl")
    reply = dataclasses.replace(answer(SUPPORTED), choice_probabilities=(0.2, 0.9, 0.8125))
    outcome = executor(FakeJudge([reply]), cache).run(SUPPORT, "en")
    assert outcome.output == SupportVerdict(verdict=1, probability=0.8125)
    resumed = executor(FakeJudge(), CallCache(tmp_path / "calls.jsonl")).run(SUPPORT, "en")
    assert resumed.output.probability == 0.8125 and resumed.usage.cached


def test_without_binary_choices_the_probability_is_unknown():
    assert executor(FakeJudge([SUPPORTED])).run(SUPPORT, "en").output.probability is None


def test_the_probability_is_not_part_of_the_answer_schema():
    assert "probability" not in STEPS["statement_support"].json_schema()["properties"]


CRITIQUE = Call.of(
    "critique",
    vote=1,
    criterion="Is it harmful?",
    user_input="q",
    retrieved_contexts=[],
    response="Leave the baby in the car.",
)


@pytest.mark.parametrize(("written", "p_yes"), [("no", 0.7), ("yes", 0.2), ("yes", 0.9)])
def test_a_critique_reads_the_judges_p_yes_after_its_reason_not_the_word_it_drew(written, p_yes):
    """The reason may be drawn at the vote temperature; P(yes) at the answer token is what the score reads."""
    text = f'{{"reason": "It may harm the baby.", "answer": "{written}"}}'
    reply = dataclasses.replace(answer(text), yes_probabilities=(0.4, p_yes))
    output = executor(FakeJudge([reply])).run(CRITIQUE, "en").output
    assert (output.answer, output.probability, output.p) == (written, p_yes, p_yes)
    assert "probability" not in STEPS["critique"].json_schema()["properties"]


def test_without_a_probability_the_written_answer_is_p_yes():
    output = executor(FakeJudge(['{"reason": "r", "answer": "yes"}'])).run(CRITIQUE, "en").output
    assert (output.probability, output.p) == (None, 1.0)


FOCUS = Call.of("response_focus", user_input="When was it built?", sentences=["It was built in 1889.", "It is loved."])


def test_each_mark_of_a_sentence_list_gets_its_own_probability(tmp_path):
    reply = dataclasses.replace(answer('{"verdicts": [1, 0]}'), choice_probabilities=(0.97, 0.31))
    output = executor(FakeJudge([reply]), CallCache(tmp_path / "calls.jsonl")).run(FOCUS, "en").output
    assert (output.verdicts, output.probabilities, output.p) == ([1, 0], [0.97, 0.31], [0.97, 0.31])
    resumed = executor(FakeJudge(), CallCache(tmp_path / "calls.jsonl")).run(FOCUS, "en").output
    assert resumed.probabilities == [0.97, 0.31]
    assert "probabilities" not in STEPS["response_focus"].json_schema()["properties"]


def test_marks_whose_probabilities_do_not_line_up_count_as_written():
    reply = dataclasses.replace(answer('{"verdicts": [1, 0]}'), choice_probabilities=(0.97,))
    output = executor(FakeJudge([reply])).run(FOCUS, "en").output
    assert (output.probabilities, output.p) == (None, [1.0, 0.0])


# --- run_many: calls decoded together ----------------------------------------------------------


def test_calls_decoded_together_keep_each_calls_retries_failures_and_cache(tmp_path):
    """The uncached calls go to the judge in one batch, identical ones once; each outcome is what run() gives: a
    cut-off answer is retried alone at twice the budget, a failure costs only its own call."""

    def statement(text: str) -> Call:
        return Call.of("statement_support", retrieved_contexts=["Paris is the capital of France."], statement=text)

    cached, cut_off, failing, fine = (statement(t) for t in ("Cached.", "Cut off.", "Failing.", "Fine."))
    budget = STEPS["statement_support"].token_budget(cut_off.input_dict())

    def respond(call: JudgeCall):
        if "Cut off." in call.last_user:
            return answer('{"verd', truncated=True) if call.max_tokens == budget else answer(SUPPORTED)
        return TimeoutError("no answer after 1 s") if "Failing." in call.last_user else SUPPORTED

    cache = CallCache(tmp_path / "calls.jsonl")
    executor(FakeJudge([SUPPORTED]), cache).run(cached, "en")
    judge = FakeBatchJudge(respond=respond)
    run = dataclasses.replace(CONFIG, batch_decode=4)
    many = StepExecutor(judge, "judge-sha", PromptLibrary(), run, cache)
    outcomes = many.run_many([(c, "en") for c in (cached, cut_off, failing, fine, fine)])
    assert judge.batches == [3]  # cached, cut off, failing, fine: the repeat of fine is not decoded again
    assert [o.output for o in outcomes] == [SupportVerdict(verdict=1)] * 2 + [None] + [SupportVerdict(verdict=1)] * 2
    assert outcomes[0].usage.cached and outcomes[4].usage.cached
    assert outcomes[1].usage.attempts == 2 and judge.calls[-1].max_tokens == 2 * budget  # retried alone
    assert (outcomes[2].failure, outcomes[2].detail) == ("judge_timeout", "no answer after 1 s")
    assert StepExecutor(FakeBatchJudge(), "judge-sha", PromptLibrary(), CONFIG).batch_size == 1  # batch_decode 1
