"""The When/Do grammar of a habit's wording, as every room writes and reads it.

A condition is "When <situation>" (also "Whenever", "If", "While", "Before", "After"). The situation is
either an *activity*, something the agent or the user does ("When writing a commit message", "When
about to push to main", "When the work involves migrations"), or an *event*, something that happens
("When a test fails", "When CI is red"). analyze writes activities as a gerund ("writing ...") or as
"about to <verb> ..." / "about to start <noun phrase>"; select reads an activity as a request for that
action and an event as a state a question or a statement can report.

A behaviour is "Do ..." or "Do not ..." (`behavior_polarity`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from habitus.lang.words import DETERMINERS

LEAD = re.compile(r"^\s*(when(?:ever)?|if|while|before|after)\b[\s,:]*", re.IGNORECASE)
# "about to push", "about to start a release": a prospective activity (analyze's "before ..." wording)
PROSPECTIVE = re.compile(
    r"^(?:(?:you|we|i|the user|someone)\s+(?:are|is|am)\s+)?about\s+to\s+", re.IGNORECASE
)
# "the work involves X", "working on a task like this": a topic, done as an activity
_TOPIC = re.compile(r"^the\s+work\s+involves\b", re.IGNORECASE)
_ASKED = re.compile(
    r"^(the user|i|we|someone|anyone)\s+(asks?|tells?|wants?|requests?)\s+(you\s+)?(to\s+)?",
    re.IGNORECASE,
)
_DO = re.compile(r"^\s*(do\s+not|don'?t|never|do|always)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Situation:
    """A condition read by the grammar: `body` is the situation without its lead ("writing a commit
    message", "push to main", "a test fails"); `activity` tells an activity from an event when the
    wording says so (None when only a verb lexicon can tell); `prospective` marks "about to ...";
    `asked` marks "the user asks (you) to ...", a request by definition."""

    lead: str
    body: str
    activity: bool | None
    prospective: bool = False
    asked: bool = False


def situation(condition: str) -> Situation:
    """Split a condition into its lead and its situation, and say what the wording alone tells."""
    text = condition.strip()
    match = LEAD.match(text)
    lead = match.group(1).lower() if match else ""
    body = text[match.end() :].strip() if match else text
    asked = _ASKED.match(body)
    if asked:
        return Situation(lead, body[asked.end() :].strip(), None, asked=True)
    about = PROSPECTIVE.match(body)
    if about:
        return Situation(lead, body[about.end() :].strip(), True, True)
    if _TOPIC.match(body):
        return Situation(lead, body, True)
    first = body.split(maxsplit=1)[0].lower() if body else ""
    if first.endswith("ing") and len(first) > 4:
        return Situation(lead, body, True)
    if lead == "before" and body:
        return Situation(lead, body, True, True)  # "before pushing", "before a release"
    return Situation(lead, body, None)


def about_to(phrase: str) -> str:
    """The prospective activity analyze writes for a "before ..." clause: "When about to push to main";
    a noun phrase is started ("When about to start a prod migration"). `situation` reads both back."""
    first = phrase.split(maxsplit=1)[0].lower() if phrase.split() else ""
    if first in DETERMINERS:
        return f"When about to start {phrase}"
    return f"When about to {phrase}"


_ARTICLES = frozenset(["a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "some"])


def behavior_polarity(behavior: str) -> int:
    """-1 for "Do not ..." / "Don't ..." / "Never ...", +1 otherwise."""
    match = _DO.match(behavior)
    return -1 if match and match.group(1).lower() not in ("do", "always") else 1
