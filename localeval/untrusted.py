"""Dataset text on its way into a judge prompt: it is data, and must not be able to speak as the prompt or the judge.

Three layers keep a response (or a context) from steering its own verdict:
- chat_template.py tokenizes the text of control tokens in data as plain text, so `<|im_end|>` cannot end the turn;
- here, text that can only be aimed at the judge is replaced by a visible marker: chat-template markup and a
  JSON verdict in the judge's own answer format ({"verdict": 1}, {"answer": "no"}); and a prompt's own <tags>
  written inside the data are escaped, so the data cannot close its block;
- the prompts put data between tags and tell the judge never to follow what it says.
"""

from __future__ import annotations

import re

MARKER = "[judge-format text removed]"

_TAG = re.compile(r"</?\s*([A-Za-z_][\w-]*)\s*>")
# Turn markup of common chat templates: ChatML and Llama 3 (<|im_start|>, <|eot_id|>), DeepSeek's full-width bars,
# Llama 2 ([INST], <<SYS>>) and Gemma (<start_of_turn>).
_CHAT_MARKUP = re.compile(r"<[|｜][^<>\s|｜]{1,48}[|｜]>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>")
# A flat JSON object holding a verdict the way the judge writes one.
_VERDICT_JSON = re.compile(r'\{[^{}]*"(?:verdict|answer)"\s*:\s*(?:"(?:yes|no)"|[01](?!\d))[^{}]*\}', re.IGNORECASE)


def data_tags(template: str) -> frozenset[str]:
    """The <tag> names a prompt template wraps its data in (lower case)."""
    return frozenset(name.lower() for name in _TAG.findall(template))


def strip_judge_format(text: str) -> str:
    """`text` with chat markup and JSON verdicts in the judge's format replaced by a visible marker."""
    return _VERDICT_JSON.sub(MARKER, _CHAT_MARKUP.sub(MARKER, text))


def neutralize(text: str, tags: frozenset[str]) -> str:
    """`text` as the judge should see it: judge-format imitations marked as removed, the template's tags escaped."""
    text = strip_judge_format(text)
    if not tags:
        return text
    return _TAG.sub(lambda m: m.group(0).replace("<", "&lt;").replace(">", "&gt;")
                    if m.group(1).lower() in tags else m.group(0), text)
