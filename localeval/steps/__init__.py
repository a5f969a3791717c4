"""Every judge step, by name. Metrics refer to steps by these names; prompts are files named after them."""

from localeval.steps.base import Call, Step, StepInput
from localeval.steps.statements import STATEMENTS
from localeval.steps.verdicts import STATEMENT_SUPPORT

STEPS: dict[str, Step] = {step.name: step for step in (STATEMENTS, STATEMENT_SUPPORT)}

__all__ = ["STEPS", "Call", "Step", "StepInput"]
