"""Calls of one step decoded together (JudgeConfig.batch_decode), on a real model (SmolLM2-135M)."""

import json
from pathlib import Path

import pytest

from localeval.data.samples import Sample
from localeval.judge import batch_decoding, estimate
from localeval.judge.gguf import GGUFJudge, _grammar
from localeval.judge.prompt_lookup import PromptLookup
from localeval.judge.protocol import ContextOverflow, GenerationRequest, JudgeConfig
from localeval.metrics.faithfulness import faithfulness
from localeval.run.runner import run_metrics
from localeval.run.step_executor import StepExecutor
from localeval.steps import STEPS
from localeval.steps.prompts import PromptLibrary

SCHEMA = STEPS["context_usefulness"].json_schema()  # a short reason, then a 0/1 verdict
INSTRUCTIONS = (
    "You check a statement against a context, like a careful fact-checker. Verdict 1: the context states "
    "the statement or it follows directly from it. Verdict 0: the context does not mention it, says "
    "something different, or contradicts it. Use only the context. First write a short reason."
)
QUESTIONS = [
    "Context: Paris is in France. Statement: Paris is in France.",
    "Context: Rome is in Italy. Statement: Rome is in Spain.",
    "Context: The Nile flows north into the Mediterranean. Statement: The Nile ends in the Mediterranean.",
    "Context: Water boils at 100 C at sea level. Statement: Water boils at 50 C.",
]


def _request(question: str, max_tokens: int = 80, instructions: str = INSTRUCTIONS) -> GenerationRequest:
    messages = [{"role": "system", "content": instructions}, {"role": "user", "content": question}]
    return GenerationRequest(messages, SCHEMA, max_tokens, 0, 0.0)


@pytest.fixture(scope="module")
def batch_judge(smollm_path: Path) -> GGUFJudge:
    return GGUFJudge(smollm_path, JudgeConfig(n_ctx=4096, batch_decode=4))


def _alone(judge: GGUFJudge, request: GenerationRequest):
    return judge.generate(request.messages, request.schema, request.max_tokens, request.seed, request.temperature)


@pytest.fixture
def batch_sizes(monkeypatch) -> list[int]:
    """The size of every batch decode_together decodes."""
    sizes: list[int] = []
    decode = batch_decoding.decode_together

    def counted(llm, requests, *args):
        sizes.append(len(requests))
        return decode(llm, requests, *args)

    monkeypatch.setattr(batch_decoding, "decode_together", counted)
    return sizes


def test_calls_decoded_together_answer_as_each_decoded_alone(qwen05_path: Path, qwen05_judge, batch_sizes):
    """Batched matrix products round differently in the last bits, so a reason may drift a word and its P with it
    (benchmarks/judge_speed.py prints by how much); the verdicts are the same."""
    judge = GGUFJudge(qwen05_path, JudgeConfig(n_ctx=4096, batch_decode=4))
    requests = [_request(q) for q in QUESTIONS]
    together = judge.generate_many(requests)
    assert batch_sizes == [4]
    verdicts = []
    for request, generation in zip(requests, together):
        alone = _alone(qwen05_judge, request)
        answer = json.loads(generation.text, strict=False)
        assert list(answer) == ["reason", "verdict"] and not generation.truncated
        assert generation.prompt_tokens == alone.prompt_tokens and generation.completion_tokens > 0
        assert (generation.choice_probabilities[-1] >= 0.5) == (answer["verdict"] == 1)
        verdicts.append((answer["verdict"], json.loads(alone.text, strict=False)["verdict"]))
    assert [batched for batched, _ in verdicts] == [alone for _, alone in verdicts]


def test_the_same_batch_from_the_same_state_gives_the_same_answers(batch_judge):
    """From an empty KV cache, as the runner starts each batch of samples: a batch takes what the cache holds, so
    what came before it may move its last bits, as it does a lone call's."""
    requests = [_request(q) for q in QUESTIONS]
    batch_judge.forget_context()
    first = batch_judge.generate_many(requests)
    batch_judge.generate_many([_request("Context: Cats purr. Statement: Dogs bark.")] * 2)
    batch_judge.forget_context()
    again = batch_judge.generate_many(requests)
    assert [(g.text, g.choice_probabilities) for g in first] == [(g.text, g.choice_probabilities) for g in again]


def test_a_batch_of_one_is_decoded_exactly_as_alone_and_a_batch_leaves_its_last_prompt(batch_judge, smollm_judge):
    """A judge that can batch still decodes a lone call bit for bit as one that cannot (--batch-decode 1). A batch
    leaves its last call's prompt in the KV cache, as a lone call does: the next call on that prompt evaluates one
    token, and a call on another prompt takes what the two share."""
    request = _request(QUESTIONS[2])
    smollm_judge.forget_context()
    alone = _alone(smollm_judge, request)
    batch_judge.forget_context()
    [single] = batch_judge.generate_many([request])
    assert (single.text, single.choice_probabilities) == (alone.text, alone.choice_probabilities)
    batch_judge.generate_many([_request(q) for q in QUESTIONS[:2]])
    again = _alone(batch_judge, _request(QUESTIONS[1]))
    assert again.reused_prompt_tokens == again.prompt_tokens - 1
    other = _alone(batch_judge, _request(QUESTIONS[3]))
    _alone(smollm_judge, _request(QUESTIONS[1]))
    other_alone = _alone(smollm_judge, _request(QUESTIONS[3]))
    assert other.reused_prompt_tokens == other_alone.reused_prompt_tokens < other.prompt_tokens - 10
    assert json.loads(other.text, strict=False)["verdict"] in (0, 1)


def test_calls_are_batched_with_calls_of_the_same_instructions(batch_judge, batch_sizes):
    """A step's calls in two languages come in one list: each language's calls are decoded in batches of their
    own, which start from that language's kept prefix state, rather than one batch evaluating both prefixes."""
    other = INSTRUCTIONS.replace("like a careful fact-checker", "as a strict examiner would")
    requests = [_request(QUESTIONS[0]), _request(QUESTIONS[1])]
    requests += [_request(q, instructions=other) for q in QUESTIONS[2:]]
    results = batch_judge.generate_many(requests)
    assert batch_sizes == [2, 2]
    assert all(json.loads(r.text, strict=False)["verdict"] in (0, 1) for r in results)


def test_each_call_of_a_batch_keeps_its_own_budget_and_window(smollm_path: Path):
    judge = GGUFJudge(smollm_path, JudgeConfig(n_ctx=512, batch_decode=4))
    too_long = _request("Context: " + "word " * 600 + "Statement: words.")
    short_budget, normal = _request(QUESTIONS[0], max_tokens=3), _request(QUESTIONS[1])
    overflow, cut, whole = judge.generate_many([too_long, short_budget, normal])
    assert isinstance(overflow, ContextOverflow) and overflow.prompt_tokens > 512
    assert cut.truncated and cut.completion_tokens == 3
    assert not whole.truncated and json.loads(whole.text, strict=False)["verdict"] in (0, 1)


def test_a_batch_past_the_timeout_fails_each_call_as_a_timeout(smollm_path: Path):
    judge = GGUFJudge(smollm_path, JudgeConfig(n_ctx=2048, batch_decode=2, timeout=0.0001))
    results = judge.generate_many([_request(q) for q in QUESTIONS[:2]])
    assert all(isinstance(r, TimeoutError) for r in results)
    assert str(results[0]).startswith("no answer within the judge timeout of 0.0001 s")


def test_a_failed_batch_fails_its_calls_and_leaves_the_cache_as_it_was(smollm_path: Path, monkeypatch):
    """A decode that fails half way through the prompts costs that batch's calls; the next call finds in the KV
    cache what the batch's first call shared with it before, and nothing half evaluated."""
    judge = GGUFJudge(smollm_path, JudgeConfig(n_ctx=2048, batch_decode=2))
    first = _request(QUESTIONS[0])
    _alone(judge, first)

    def failing(*args):
        raise RuntimeError("llama_decode failed (-3) on a batch of 40 tokens")

    with monkeypatch.context() as patched:
        patched.setattr(batch_decoding, "_decode", failing)
        results = judge.generate_many([_request(q) for q in QUESTIONS[1:3]])
    assert [str(r) for r in results] == ["llama_decode failed (-3) on a batch of 40 tokens"] * 2
    after = _alone(judge, first)
    shared = estimate.shared_prefix(
        judge.prompt_tokens(first.messages), judge.prompt_tokens(_request(QUESTIONS[1]).messages)
    )
    assert after.reused_prompt_tokens == shared
    assert json.loads(after.text, strict=False)["verdict"] in (0, 1)


def test_a_run_in_batches_gives_the_same_scores_each_time(batch_judge, batch_sizes):
    """The same data, judge, prompts, seed and batch size: the same scores, though a batch's rounding differs
    from a lone call's (benchmarks/judge_speed.py prints by how much)."""
    samples = [
        Sample(f"s{n}", n, user_input="Where is it?", response=response, retrieved_contexts=(context,))
        for n, (response, context) in enumerate(
            [
                ("Paris is in France.", "Paris is the capital of France."),
                ("Rome is in Spain.", "Rome is the capital of Italy."),
                ("The Nile ends in the Mediterranean.", "The Nile flows north into the Mediterranean Sea."),
            ]
        )
    ]
    runs = []
    for _ in range(2):
        executor = StepExecutor(batch_judge, "smollm2-135m", PromptLibrary(), batch_judge.config)
        results = run_metrics(samples, [faithfulness], executor, lambda _: "en")
        runs.append([(r.scores["faithfulness"].value, r.scores["faithfulness"].reason) for r in results])
    assert runs[0] == runs[1]
    assert all(value == value for value, _ in runs[0])  # every sample scored, none NaN
    assert batch_sizes and max(batch_sizes) > 1  # each step's calls went to the judge together


def _tokens(*parts: range | list[int]) -> list[int]:
    return [token for part in parts for token in part]


def test_a_call_reuses_the_longest_prompt_an_earlier_call_of_the_batch_evaluated():
    """Hand-built prompts after a 5-token shared prefix: B repeats 25 more of A's tokens, C only the prefix, D 10
    more of A's (under MIN_SHARED_TAIL, so not worth another pass), E 35 of B's, which takes 30 of them from A: E is
    evaluated a pass after B, which is a pass after A."""
    a = _tokens(range(60))
    b = _tokens(range(30), [900] * 20)
    c = _tokens(range(5), [800] * 30)
    d = _tokens(range(15), [700] * 30)
    e = _tokens(range(30), [900] * 5, [600] * 10)
    requests = [batch_decoding.Request(tokens, None, 8, 0, 0.0) for tokens in (a, b, c, d, e)]  # type: ignore[arg-type]
    held = batch_decoding.held_lengths(_tokens(range(5), [1000] * 50), requests)
    assert held == [5] * 5
    sources = batch_decoding.prompt_sources(requests, held)
    assert [(s.sequence, s.length) for s in sources] == [(0, 5), (0, 30), (2, 5), (3, 5), (1, 35)]
    assert batch_decoding.prompt_passes(sources) == [[0, 2, 3], [1], [4]]
    # the prefix once, then each call's tokens past what it reuses, and its budget of 8
    assert batch_decoding.kv_cells_needed(requests, held) == 5 + (55 + 20 + 30 + 40 + 10) + 5 * 8


def test_a_call_takes_what_the_kv_cache_held_before_the_batch():
    """The cache holds a 40-token prompt (the last call's, on the same context). A shares 5 of it; B shares 30 and
    takes them; C shares 5 of it and 25 more with A, which it takes from A; D is exactly the held prompt, and
    takes all but its last token."""
    cached = _tokens(range(40))
    a = _tokens(range(5), [900] * 30)
    b = _tokens(range(30), [800] * 10)
    c = _tokens(range(5), [900] * 25, [700] * 5)
    requests = [batch_decoding.Request(tokens, None, 4, 0, 0.0) for tokens in (a, b, c, cached)]  # type: ignore[arg-type]
    held = batch_decoding.held_lengths(cached, requests)
    assert held == [5, 30, 5, 39]
    sources = batch_decoding.prompt_sources(requests, held)
    assert [(s.sequence, s.length) for s in sources] == [(0, 5), (1, 30), (0, 30), (3, 39)]
    # the held cells once (up to the longest use), then each call's own tail and its budget of 4
    assert batch_decoding.kv_cells_needed(requests, held) == 39 + (30 + 10 + 5 + 1) + 4 * 4


def test_calls_on_the_same_context_share_its_evaluation_and_answer_as_alone(qwen05_path: Path, qwen05_judge):
    """One statement against a short context, then four against one long context, two batches of them: the second
    call on the long context evaluates only its own statement, and so does the next batch's first, since a batch
    leaves its last call's prompt in the KV cache. Every verdict is the one decoded alone."""
    context = (
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It is named after "
        "the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889. It was the "
        "centrepiece of the 1889 World's Fair and was at first criticised by some of France's leading artists. "
    )
    statements = [
        "Cats purr.",
        "The Eiffel Tower is in Paris.",
        "The Eiffel Tower was built in 1950.",
        "The tower is named after Gustave Eiffel.",
        "The Eiffel Tower is in London.",
    ]
    contexts = ["Rome is the capital of Italy and lies on the Tiber.", context, context, context, context]
    requests = [_request(f"Context: {c}Statement: {s}") for c, s in zip(contexts, statements)]
    judge = GGUFJudge(qwen05_path, JudgeConfig(n_ctx=4096, batch_decode=3))
    together = judge.generate_many(requests)  # in two batches: three calls, then two
    instructions = together[0].reused_prompt_tokens
    assert together[1].reused_prompt_tokens == instructions  # the long context is new here
    assert together[2].reused_prompt_tokens > instructions + 40  # the context, taken from the call before
    assert together[3].reused_prompt_tokens > instructions + 40  # the context, left by the batch before
    answered = 0
    for request, generation in zip(requests, together):
        alone = _alone(qwen05_judge, request)
        assert generation.prompt_tokens == alone.prompt_tokens
        assert generation.truncated == alone.truncated  # the 0.5B's reason may run past its budget, alone too
        if not generation.truncated:
            verdicts = [json.loads(g.text, strict=False)["verdict"] for g in (generation, alone)]
            assert verdicts[0] == verdicts[1]
            answered += 1
    assert answered >= 3


STATEMENTS = STEPS["statements"].json_schema()
SENTENCES = [
    "The Eiffel Tower was built by the company of Gustave Eiffel between 1887 and 1889 in Paris.",
    "Mount Everest, on the border of Nepal and China, is 8,849 metres above sea level.",
    "The Nile flows north through Egypt and ends in the Mediterranean Sea.",
    "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911.",
]


def _rewrite(sentence: str) -> GenerationRequest:
    instructions = (
        'Rewrite the sentence as a list of short statements, in its own words. Reply with JSON only: {"statements": '
        "[...]}."
    )
    messages = [{"role": "system", "content": instructions}, {"role": "user", "content": f"Sentence: {sentence}"}]
    return GenerationRequest(messages, STATEMENTS, 120, 0, 0.0)


def test_a_batch_checks_prompt_lookup_guesses_and_keeps_those_the_judge_would_write(qwen05_path: Path, qwen05_judge):
    """Statements copy their sentence, so most guessed tokens are kept. Guessing changes how many tokens a step
    decodes, never which token is drawn: the statements are those decoded alone, up to a batch's last bits."""
    judge = GGUFJudge(qwen05_path, JudgeConfig(n_ctx=4096, batch_decode=4, draft_tokens=3))
    together = judge.generate_many([_rewrite(s) for s in SENTENCES])
    drafted, kept = judge._llm.drafted_tokens, judge._llm.kept_draft_tokens
    assert kept > sum(g.completion_tokens for g in together) / 3  # a third of the answers' tokens were guessed right
    assert drafted > kept  # and some guesses were wrong, and dropped
    same = 0
    for sentence, generation in zip(SENTENCES, together):
        alone = _alone(qwen05_judge, _rewrite(sentence))
        statements = json.loads(generation.text, strict=False)["statements"]
        assert statements and not generation.truncated
        same += statements == json.loads(alone.text, strict=False)["statements"]
    assert same >= 3


class _WrongGuess:
    """Guesses a token the judge never writes here (a rare CJK character), at every step."""

    def __init__(self, token: int):
        self.token = token

    def __call__(self, tokens):
        import numpy as np

        return np.array([self.token] * 3, dtype=np.intc)


def test_a_wrong_guess_is_dropped_and_the_answers_are_as_without_guesses(smollm_path: Path):
    """Each step checks three wrong tokens per sequence: none is kept, and their cells are dropped before the next
    step, so the answers are those decoded with no guesses."""
    judge = GGUFJudge(smollm_path, JudgeConfig(n_ctx=4096, batch_decode=4, draft_tokens=0))
    llm = judge._llm
    [wrong] = llm.tokenize("龘".encode(), add_bos=False, special=False)[-1:]
    requests = []
    for question in QUESTIONS:
        tokens, _ = judge.tokenizer.prompt_and_prefix(_request(question).messages)
        requests.append(batch_decoding.Request(tokens, _grammar(json.dumps(SCHEMA)), 40, 0, 0.0))
    judge.forget_context()
    plain = batch_decoding.decode_together(llm, requests)
    judge.forget_context()
    guessed = batch_decoding.decode_together(llm, requests, drafts=_WrongGuess(wrong))
    assert all(d.kept_draft_tokens == 0 for d in guessed)
    for d in guessed:  # three guesses at each step after the first token, fewer where the budget ends
        steps_from = range(1, d.completion_tokens + (d.finish == "stop"))  # tokens written before each step
        assert d.drafted_tokens == sum(min(3, 40 - written - 1) for written in steps_from)
    assert [json.loads(d.text, strict=False)["verdict"] for d in guessed if d.finish == "stop"] == [
        json.loads(d.text, strict=False)["verdict"] for d in plain if d.finish == "stop"
    ]
    assert [d.completion_tokens for d in guessed] == [d.completion_tokens for d in plain]


def test_a_guess_never_runs_past_the_budget():
    """Each checked token can add a drawn one, so a sequence with b tokens of budget left guesses at most b - 1."""
    request = batch_decoding.Request(list(range(40)), None, 6, 0, 0.0)  # type: ignore[arg-type]
    lookup = PromptLookup(max_draft=8)
    for written, expected in [([10, 11], 3), ([10, 11, 12, 13], 1), ([10, 11, 12, 13, 14], 0)]:
        s = batch_decoding._Sequence(request, None, 40, list(written))  # type: ignore[arg-type]
        assert batch_decoding._guess(s, lookup) == list(range(written[-1] + 1, written[-1] + 1 + expected))
    assert batch_decoding._guess(batch_decoding._Sequence(request, None, 40, [10]), None) == []  # type: ignore[arg-type]
