"""Every judge step, by name. Metrics refer to steps by these names; prompts are files named after them."""

from localeval.steps.base import Call, Step, StepInput
from localeval.steps.completeness import PART_ANSWERED, QUESTION_PARTS, RESPONSE_FOCUS
from localeval.steps.entities import ENTITIES
from localeval.steps.questions import QUESTIONS
from localeval.steps.relevance import SENTENCE_RELEVANCE
from localeval.steps.rubric import RUBRIC
from localeval.steps.statements import ANSWER_CLAIM, STATED_CLAIM, STATEMENTS
from localeval.steps.summary import SUMMARY_ANSWERS, SUMMARY_QUESTIONS
from localeval.steps.verdicts import CONTEXT_USEFULNESS, CRITIQUE, STATEMENT_SUPPORT

STEPS: dict[str, Step] = {
    step.name: step
    for step in (
        STATEMENTS,
        STATEMENT_SUPPORT,
        QUESTIONS,
        CONTEXT_USEFULNESS,
        SENTENCE_RELEVANCE,
        ENTITIES,
        CRITIQUE,
        RUBRIC,
        SUMMARY_QUESTIONS,
        SUMMARY_ANSWERS,
        QUESTION_PARTS,
        PART_ANSWERED,
        RESPONSE_FOCUS,
        ANSWER_CLAIM,
        STATED_CLAIM,
    )
}

__all__ = ["STEPS", "Call", "Step", "StepInput"]
