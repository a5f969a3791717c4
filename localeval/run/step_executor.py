"""Running one judge step: prompt rendering, the JSON grammar, tolerant parsing, retries and caching.

Every way a call can fail ends as a reason code, never as an exception: `context_overflow`,
`judge_truncated`, `judge_unparseable`, `judge_invalid`, `judge_timeout`, `judge_error`. A prompt too long
for the window is first cut down the way its step declares (localeval/steps/fitting.py); `context_overflow`
is left for a step that has no such way, or whose fixed part alone does not fit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from localeval.judge.protocol import (
    CallUsage,
    ContextOverflow,
    Generation,
    GenerationRequest,
    JudgeBackend,
    JudgeConfig,
)
from localeval.steps import STEPS, Call, Step
from localeval.steps.base import StepInput
from localeval.steps.fitting import Cut, input_chars, shrink
from localeval.steps.prompts import PromptLibrary, PromptTemplate
from localeval.steps.relevance import SentenceVerdicts

FIT_TRIES = 6  # prompts tokenized while cutting an input down; each costs a tokenization, not an evaluation
MIN_KEPT_CHARS = 100  # below this, a cut input is no longer worth judging: context_overflow instead


@dataclass(frozen=True)
class StepOutcome:
    """The validated output of a step (or an encoder's result), or the reason it has none."""

    output: BaseModel | Any
    failure: str | None = None
    detail: str | None = None
    usage: CallUsage = CallUsage()
    cut: Cut | None = None  # what fitting the prompt into the window left out of the input


def parse_json_answer(text: str) -> Any | None:
    """The outermost JSON object in `text`, tolerating raw control characters inside strings."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        return json.loads(text[start : end + 1], strict=False)
    except json.JSONDecodeError:
        return None


# Failures that the same call would repeat (greedy decoding): cached so a rerun does not pay for them
# again. Timeouts, errors and context overflows depend on the machine or the settings: retried.
_REPEATABLE_FAILURES = {"judge_truncated", "judge_unparseable", "judge_invalid"}


class CallCache:
    """Judge answers (outputs or repeatable failures) by call key, in memory and in a JSONL file.

    The file makes an interrupted run resumable: a rerun into the same folder reuses every entry.
    """

    def __init__(self, path: Path | None = None):
        self.path = path
        self._entries: dict[str, dict[str, Any]] = {}
        self._cut_short = False  # the file ends without a newline: the next entry must start on a new line
        if path is not None and path.exists():
            text = path.read_text(encoding="utf-8")
            self._cut_short = bool(text) and not text.endswith("\n")
            for line in text.split("\n"):  # not splitlines(): U+2028 and \x85 may sit inside JSON strings
                try:
                    entry = json.loads(line)
                    self._entries[entry["key"]] = entry["entry"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut short by an interrupted write

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._entries.get(key)

    def items(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._entries.items())

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self._entries[key] = entry
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as file:
                file.write(
                    ("\n" if self._cut_short else "")
                    + json.dumps({"key": key, "entry": entry}, ensure_ascii=False)
                    + "\n"
                )
            self._cut_short = False


class StepExecutor:
    """Runs step calls on one judge; identical calls (same inputs, prompt, model, seed) run once."""

    def __init__(
        self,
        judge: JudgeBackend,
        judge_id: str,
        prompts: PromptLibrary,
        config: JudgeConfig,
        cache: CallCache | None = None,
    ):
        self.judge = judge
        self.judge_id = judge_id
        self.prompts = prompts
        self.config = config
        self.cache = cache if cache is not None else CallCache()  # an empty cache is falsy (__len__)

    def forget_context(self) -> None:
        """The next call starts from an empty KV cache, as the first call of a run does; a judge without one
        (the test fakes) has nothing to forget."""
        if forget := getattr(self.judge, "forget_context", None):
            forget()

    @property
    def batch_size(self) -> int:
        """How many calls of one step run_many hands the judge at once: config.batch_decode where it can take them."""
        return self.config.batch_decode if hasattr(self.judge, "generate_many") else 1

    def run(self, call: Call, lang: str) -> StepOutcome:
        prepared = self._prepare(call, lang)
        if (cached := self._cached(prepared)) is not None:
            return cached
        try:
            outcome = self._generate(prepared)
        except ContextOverflow as overflow:
            outcome = self._fitted(prepared, overflow)
        return self._store(prepared, outcome)

    def run_many(self, calls: list[tuple[Call, str]]) -> list[StepOutcome]:
        """Each (call, language)'s outcome, as run() gives it; the calls not cached are decoded together where the
        judge can (batch_size > 1), and identical ones once."""
        if self.batch_size <= 1 or len(calls) < 2:
            return [self.run(call, lang) for call, lang in calls]
        prepared = [self._prepare(call, lang) for call, lang in calls]
        outcomes: dict[int, StepOutcome] = {}
        first_of: dict[str, int] = {}
        for n, p in enumerate(prepared):
            if (cached := self._cached(p)) is not None:
                outcomes[n] = cached
            else:
                first_of.setdefault(p.key, n)
        todo = list(first_of.values())
        requests = [GenerationRequest(p.messages, p.schema, p.budget, p.seed, p.temperature) for p in prepared]
        try:  # batch_size says the judge has generate_many
            generations = self.judge.generate_many([requests[n] for n in todo])  # type: ignore[attr-defined]
        except Exception as error:  # a judge failure must cost these calls' scores, not the run
            generations = [error] * len(todo)
        for n, generation in zip(todo, generations):
            outcomes[n] = self._store(prepared[n], self._from_generation(prepared[n], generation))
        for n, p in enumerate(prepared):  # a repeat of a call decoded above: its answer, as run() would find it
            if n not in outcomes:
                outcomes[n] = self._cached(p) or outcomes[first_of[p.key]]
        return [outcomes[n] for n in range(len(calls))]

    def _prepare(self, call: Call, lang: str) -> _Prepared:
        step = STEPS[call.step]
        template = self.prompts.get(call.step, lang)
        seed, temperature = self._sampling(call.vote)
        inputs = call.input_dict()
        schema, budget = step.json_schema(inputs), step.token_budget(inputs)
        messages = template.messages(inputs)
        key = _call_key(self.judge_id, call.step, messages, seed, temperature, schema, budget)
        return _Prepared(step, template, inputs, messages, schema, budget, seed, temperature, key)

    def _cached(self, prepared: _Prepared) -> StepOutcome | None:
        return _from_cache(prepared.step, self.cache.get(prepared.key), self.judge.n_ctx)

    def _store(self, prepared: _Prepared, outcome: StepOutcome) -> StepOutcome:
        # A cut depends on the window, so an answer to a cut prompt is reused only for the same window.
        window = {"cut": outcome.cut.as_dict(), "n_ctx": self.judge.n_ctx} if outcome.cut else {}
        if outcome.output is not None:
            self.cache.put(
                prepared.key, {"output": outcome.output.model_dump(mode="json", exclude_none=True), **window}
            )
        elif outcome.failure in _REPEATABLE_FAILURES:
            self.cache.put(prepared.key, {"failure": outcome.failure, "detail": outcome.detail, **window})
        return outcome

    def _from_generation(self, prepared: _Prepared, generation: Generation | Exception) -> StepOutcome:
        """A call's outcome from what generate_many gave for it: as _generate and run() would make it."""
        if isinstance(generation, ContextOverflow):
            return self._fitted(prepared, generation)
        if isinstance(generation, Exception):
            return _failure(generation, CallUsage())
        return self._generate(prepared, first=generation)

    def _fitted(self, prepared: _Prepared, overflow: ContextOverflow) -> StepOutcome:
        """The call with the step's fitting input cut down until the prompt fits the window."""
        step, template, inputs, budget = prepared.step, prepared.template, prepared.inputs, prepared.budget
        detail = (
            f"prompt needs {overflow.prompt_tokens} tokens plus {budget} for the answer; context is {self.judge.n_ctx}"
        )
        if step.fit is None:
            return StepOutcome(None, "context_overflow", detail + f"; step '{step.name}' has no input it may cut")
        room = self.judge.n_ctx - budget
        tried = [(input_chars(inputs[step.fit.input_name]), overflow.prompt_tokens)]
        for _ in range(FIT_TRIES):
            max_chars = _next_size(tried, room)
            if max_chars <= 0:
                break
            fitted, cut = shrink(step.fit, inputs, max_chars)
            if cut.kept_chars < min(MIN_KEPT_CHARS, cut.total_chars):
                break  # a judge shown next to nothing would answer as if the input said nothing
            try:
                outcome = self._generate(
                    replace(
                        prepared,
                        inputs=fitted,
                        messages=template.messages(fitted),
                        schema=step.json_schema(fitted),
                        budget=step.token_budget(fitted),
                    )
                )
            except ContextOverflow as again:
                tried.append((cut.kept_chars, again.prompt_tokens))
                continue
            return replace(outcome, cut=cut)
        return StepOutcome(None, "context_overflow", f"{detail}; even cut to {step.fit.describe()}, it did not fit")

    def _sampling(self, vote: int) -> tuple[int, float]:
        if vote == 0:
            return self.config.seed, self.config.temperature
        return self.config.seed + vote, self.config.vote_temperature

    def _generate(self, prepared: _Prepared, first: Generation | None = None) -> StepOutcome:
        """One attempt at the step's budget; if the answer is cut off, one more at twice the budget.

        `first` is the first attempt's generation where it was already decoded, with other calls."""
        step, messages, schema, budget = prepared.step, prepared.messages, prepared.schema, prepared.budget
        usage = CallUsage()
        for attempt, max_tokens in enumerate((budget, budget * 2)):
            try:
                generation = (
                    first
                    if first is not None and not attempt
                    else self.judge.generate(messages, schema, max_tokens, prepared.seed, prepared.temperature)
                )
            except ContextOverflow:
                if not attempt:
                    raise  # the prompt itself does not fit: the caller cuts it down
                return StepOutcome(
                    None,
                    "judge_truncated",
                    f"answer exceeded {budget} tokens; no room for {max_tokens} in a context of {self.judge.n_ctx}",
                    usage,
                )
            except Exception as error:  # a judge failure must cost one score, not the run
                return _failure(error, usage)
            usage = CallUsage(
                usage.prompt_tokens + generation.prompt_tokens,
                usage.completion_tokens + generation.completion_tokens,
                usage.seconds + generation.seconds,
                usage.attempts + 1,
            )
            if not generation.truncated:
                return _validate(step, generation, usage)
        return StepOutcome(None, "judge_truncated", f"answer exceeded {budget * 2} tokens", usage)


@dataclass(frozen=True)
class _Prepared:
    """A call rendered for the judge: its prompt, grammar, budget and draw, and the key its answer is cached by."""

    step: Step
    template: PromptTemplate
    inputs: Mapping[str, StepInput]
    messages: list[dict[str, str]]
    schema: dict[str, Any]
    budget: int
    seed: int
    temperature: float
    key: str


def _failure(error: Exception, usage: CallUsage) -> StepOutcome:
    if isinstance(error, TimeoutError):
        return StepOutcome(None, "judge_timeout", str(error), usage)
    return StepOutcome(None, "judge_error", f"{type(error).__name__}: {error}", usage)


def _next_size(tried: list[tuple[int, int]], room: int) -> int:
    """Characters to keep next, from the (characters, prompt tokens) tried so far: a line through the last two
    (the prompt's fixed part is its intercept), or, after one try, as if every token came from the input."""
    chars, tokens = tried[-1]
    if len(tried) > 1 and tried[-2][0] != chars and tried[-2][1] > tokens:
        per_char = (tried[-2][1] - tokens) / (tried[-2][0] - chars)
        fixed = tokens - per_char * chars
        estimate = (room - fixed) / per_char
    else:
        estimate = room * chars / tokens
    return min(int(estimate * 0.97), int(chars * 0.9))


def _from_cache(step: Step, entry: Any, n_ctx: int) -> StepOutcome | None:
    """The cached outcome, or None for a miss, including an entry that no longer fits the step's schema
    and an answer to a prompt cut for another window."""
    if not isinstance(entry, dict) or entry.get("n_ctx", n_ctx) != n_ctx:
        return None
    cut = Cut.from_dict(entry["cut"]) if "cut" in entry else None
    if entry.get("failure") in _REPEATABLE_FAILURES:
        return StepOutcome(None, entry["failure"], entry.get("detail"), CallUsage(cached=True), cut)
    try:
        return StepOutcome(step.output.model_validate(entry.get("output")), usage=CallUsage(cached=True), cut=cut)
    except ValidationError:
        return None


def _validate(step: Step, generation: Generation, usage: CallUsage) -> StepOutcome:
    data = parse_json_answer(generation.text)
    if data is None:
        return StepOutcome(None, "judge_unparseable", generation.text[:200], usage)
    try:
        output = step.output.model_validate(data)
    except ValidationError as error:
        return StepOutcome(None, "judge_invalid", str(error.errors()[0]["msg"]), usage)
    return StepOutcome(_with_probabilities(output, generation), usage=usage)


def _with_probabilities(output: BaseModel, generation: Generation) -> BaseModel:
    """The judge's own P(1) where it wrote its verdict, which it writes last: the last 0/1 (a reason before it
    may hold digits) or, for a yes/no answer, the last yes/no; for a list of marks, each mark's."""
    if isinstance(output, SentenceVerdicts):  # one mark per sentence, and the answer holds no other digit
        marks = generation.choice_probabilities
        return (
            output.model_copy(update={"probabilities": [round(p, 6) for p in marks]})
            if len(marks) == len(output.verdicts)
            else output
        )
    fields = type(output).model_fields
    if "probability" not in fields:
        return output
    choices = generation.yes_probabilities if "answer" in fields else generation.choice_probabilities
    return output.model_copy(update={"probability": round(choices[-1], 6)}) if choices else output


def _call_key(
    judge_id: str,
    step: str,
    messages: list[dict[str, str]],
    seed: int,
    temperature: float,
    schema: dict[str, Any],
    budget: int,
) -> str:
    """Everything that decides the answer: the prompt exactly as the judge reads it (file, inputs and rendering
    code all show there), the grammar and the token budget."""
    payload = json.dumps(
        [judge_id, step, messages, seed, temperature, schema, budget], ensure_ascii=False, sort_keys=True
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
