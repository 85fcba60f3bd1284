"""Derived views of a care year: causal chains and a one-line summary."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date
from typing import NamedTuple

from medmemorybench.simulate.models import CareYear, Event
from medmemorybench.simulate.timeline import regimen_changes


class Chain(NamedTuple):
    """A causal chain: events each triggered by the one before."""

    event_ids: list[str]
    span_days: int


def causal_chains(year: CareYear, min_events: int = 3, maximal_only: bool = True) -> list[Chain]:
    """Causal chains of at least `min_events` events, longest first.

    A chain follows `triggered_by` links back (the longest way) from its last event; by default only
    from events that trigger nothing further, with `maximal_only=False` from every event.
    """
    by_id: dict[str, Event] = {e.event_id: e for e in year.events}
    triggers_something = {t for e in year.events for t in e.triggered_by}

    def longest_back(event_id: str) -> list[str]:
        parents = by_id[event_id].triggered_by
        if not parents:
            return [event_id]
        best = max((longest_back(p) for p in parents), key=len)
        return [*best, event_id]

    chains = []
    for event in year.events:
        if (maximal_only and event.event_id in triggers_something) or not event.triggered_by:
            continue
        path = longest_back(event.event_id)
        if len(path) >= min_events:
            first, last = date.fromisoformat(by_id[path[0]].date), date.fromisoformat(by_id[path[-1]].date)
            chains.append(Chain(path, (last - first).days))
    return sorted(chains, key=lambda c: (-len(c.event_ids), c.event_ids))


class YearSummary(NamedTuple):
    """Headline numbers of one care year."""

    persona_id: str
    condition: str
    events: int
    regimen_changes: int
    lab_measurements: int
    longest_chain: int
    longest_chain_days: int
    traps: str


def summarize_year(year: CareYear) -> YearSummary:
    """Counts that show at a glance whether a year is rich enough to ask questions about."""
    chains = causal_chains(year)
    labs = sum(1 for e in year.events for f in e.facts if f.type == "lab")
    return YearSummary(
        persona_id=year.persona.persona_id,
        condition=year.persona.condition,
        events=len(year.events),
        regimen_changes=len(regimen_changes(year)),
        lab_measurements=labs,
        longest_chain=len(chains[0].event_ids) if chains else 0,
        longest_chain_days=chains[0].span_days if chains else 0,
        traps=", ".join(f"{t.category}={t.option}" for t in year.persona.traps),
    )


class SkeletonShare(NamedTuple):
    """The most common event kind at any one session index, across a cohort."""

    share: float
    """Fraction of the patients whose session `index` is of kind `kind`."""
    index: int
    kind: str


def skeleton_share(years: list[CareYear]) -> SkeletonShare:
    """How much the years share one skeleton: the largest fraction of patients holding the same event kind
    at the same session index (1.0: every year the same; the benchmark keeps it at or under 0.30)."""
    by_index: dict[int, Counter] = defaultdict(Counter)
    for year in years:
        for event in year.events:
            by_index[event.index][event.kind] += 1
    share, index, kind = max((count / len(years), index, kind) for index, counter in by_index.items()
                             for kind, count in counter.items())
    return SkeletonShare(share, index, kind)
