"""A GGUF file's chat template: untrusted Jinja, rendered in a sandbox, with user text kept apart from control tokens.

The template comes from a model file the user downloaded, so it renders in Jinja's immutable sandbox
(through llama-cpp-python's formatter), and any failure, including a template that reaches for Python
internals, is a clear ModelFileError rather than a traceback.

The template writes the turn markers (`<|im_start|>`, `<|im_end|>`, ...) itself, so its own text is tokenized
with special tokens on. Message contents carry the user's data, which may quote the same marker text (a
prompt-injection attempt, or a log that happens to contain it): that text must stay plain text, or a
response could close its turn and speak as the system. Such contents are tokenized apart from the
template, with special tokens off.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from localeval.errors import ModelFileError

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

Message = dict[str, str]
Tokenize = Callable[[str, bool], list[int]]  # (text, special) -> token ids


@dataclass(frozen=True)
class Segment:
    """A piece of the rendered prompt: template text (may hold control tokens) or a message's content."""

    text: str
    is_template: bool


class ChatTemplate:
    """Renders messages with a model's chat template; `origin` names where the template came from, for messages."""

    def __init__(self, source: str, bos_token: str, eos_token: str, origin: str):
        import jinja2
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.origin = origin
        self.sha256 = hashlib.sha256(source.encode("utf-8")).hexdigest()
        try:
            self._formatter = Jinja2ChatFormatter(template=source, eos_token=eos_token, bos_token=bos_token)
        except jinja2.TemplateError as error:
            raise ModelFileError(f"The chat template of {origin} is not valid Jinja: {error}") from None
        # A template that cannot render fails now, at load, rather than on the first judge call.
        self.segments([{"role": "system", "content": "x"}, {"role": "user", "content": "x"}])

    def render(self, messages: list[Message]) -> str:
        """The prompt as one string, the way the model was trained to read it."""
        try:
            # The formatter hands the messages to the template as they are: role and content strings are all it reads.
            return self._formatter(messages=cast("list[ChatCompletionRequestMessage]", messages)).prompt
        except Exception as error:  # a template is arbitrary code: any exception is the template's fault
            kind = "uses something the sandbox forbids" if _is_security_error(error) else "fails to render"
            raise ModelFileError(
                f"The chat template of {self.origin} {kind}: {type(error).__name__}: {error}. "
                "Give a trusted template with --chat-template FILE."
            ) from None

    def segments(self, messages: list[Message]) -> list[Segment]:
        """The rendered prompt split into template text and message contents, in order.

        Each content is replaced by a random marker for rendering, then put back as its own segment.
        A template that rewrites the marker (e.g. cuts it up) is rejected, since it would not be
        clear which text came from the user.
        """
        markers = [f"localeval-content-{secrets.token_hex(8)}" for _ in messages]
        rendered = self.render([{**m, "content": marker} for m, marker in zip(messages, markers)])
        contents = dict(zip(markers, (m["content"] for m in messages)))
        pieces: list[Segment] = []
        rest = rendered
        for marker in markers:
            before, found, rest_after = rest.partition(marker)
            if not found:
                raise ModelFileError(
                    f"The chat template of {self.origin} does not write each message's content "
                    "as given. Give a template that does with --chat-template FILE."
                )
            pieces += [Segment(before, True), Segment(contents[marker], False)]
            rest = rest_after
        pieces.append(Segment(rest, True))
        if any(marker in piece.text for piece in pieces if piece.is_template for marker in markers):
            raise ModelFileError(
                f"The chat template of {self.origin} writes a message's content more than once. "
                "Give a template that does not with --chat-template FILE."
            )
        return [piece for piece in pieces if piece.text]


def tokenize_segments(segments: list[Segment], tokenize: Tokenize, control_texts: Collection[str]) -> list[int]:
    """Template text may contain control tokens; message contents never do.

    Contents that spell no control token (the usual case) are tokenized with the template in one pass,
    exactly as the model saw its training data; tokenizing pieces apart can change the tokens where a
    piece ends mid-word.
    """
    contents = [segment.text for segment in segments if not segment.is_template]
    if not any(control in text for text in contents for control in control_texts):
        return tokenize("".join(segment.text for segment in segments), True)
    tokens: list[int] = []
    for segment in segments:
        tokens += tokenize(segment.text, segment.is_template)
    return tokens


def _is_security_error(error: Exception) -> bool:
    from jinja2.exceptions import SecurityError

    return isinstance(error, SecurityError)
