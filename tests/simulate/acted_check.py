"""A result said to need acting on is acted on (issue 27, the seed-73 read): "2.26 mmol/L is over the 1.80 mmol/L we aim
for with your condition, so we need to act on it" beside "the ezetimibe carries on as before, because everything is
stable on it" and no other change (P0009 S086); "132 mmHg is above the 119 mmHg limit, and that matters" with every
medicine kept as it is (P0004 S037, S094).

The check reads each visit's rendered text in English or Chinese and the visit's medicine decisions, never the code
that picks the wording.
"""

from __future__ import annotations

import re

from medmemorybench.simulate.models import CareYear, Event, MedicationFact
from tests.simulate.clinical import fail

ACTION_PROMISED = {
    "en": re.compile(r"\b(?:act on (?:it|that)|needs attention|and that matters|[Ww]e'll adjust it)\b"),
    "zh": re.compile(r"需要调整|我会处理|得调整一下|需要处理|得想办法降下来|这个要重视|这很重要"),
}
"""Words that say a result must be acted on now."""
ACTIONS = frozenset({"start", "increase", "decrease", "stop", "administer"})
"""Medicine decisions that act on a result (a medicine kept, or a dose corrected to what is taken, does not)."""


def result_acted_on_when_said(year: CareYear, sessions: list[tuple[Event, str]], lang: str) -> list[str]:
    """Every visit whose text says a result must be acted on while it starts, changes and stops no medicine."""
    out = []
    for event, text in sessions:
        found = ACTION_PROMISED[lang].search(text)
        if found is not None and not any(isinstance(f, MedicationFact) and f.action in ACTIONS
                                         for f in event.facts):
            at = found.start()
            out.append(fail("result_acted_on_when_said", year, event,
                            f"{found.group(0)!r} with no medicine changed: {text[max(0, at - 120):at + 30]!r}"))
    return out
