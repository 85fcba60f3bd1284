"""A readable timeline of one care year for the terminal (`medmemorybench show`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import Condition
from medmemorybench.simulate.describe import describe_event, describe_fact, drug_name, format_number
from medmemorybench.simulate.models import AvoidedFact, CareYear, CautionFact, Event, Forbidden, MedicationFact
from medmemorybench.simulate.summary import causal_chains
from medmemorybench.simulate.timeline import regimen_changes, state_on

PHASE_NAMES = {
    1: "hidden onset / misdiagnosis",
    2: "turning point and diagnosis",
    3: "complications",
    4: "lifestyle and psychological strain",
    5: "follow-up and living with the disease",
}


def choice_notes(kb: KnowledgeBase, condition: Condition, event: Event) -> list[str]:
    """For each drug started: the care step, the candidate's rank, and the rules that passed over the others."""
    notes = []
    avoided = [f for f in event.facts if isinstance(f, AvoidedFact)]
    for fact in event.facts:
        if not isinstance(fact, MedicationFact) or fact.action not in ("start", "administer"):
            continue
        step = next((s for s in condition.care_path if s.key == fact.step), None)
        if step is None:
            notes.append(f"{drug_name(kb, fact.drug)}: {fact.reason} (for {fact.indication}); no care step")
            continue
        rank = step.drug_keys.index(fact.drug) + 1 if fact.drug in step.drug_keys else 0
        passed = [f"{drug_name(kb, a.drug)} barred by {', '.join(a.rules)}" for a in avoided if a.instead == fact.drug]
        cautions = [c.rule for c in event.facts if isinstance(c, CautionFact) and c.drug == fact.drug]
        line = f"{drug_name(kb, fact.drug)}: step {step.key}, candidate {rank} of {len(step.candidates)}, " \
               f"allowed by every rule (for {fact.indication})"
        if passed:
            line += "; passed over: " + "; ".join(passed)
        if cautions:
            line += "; cautions: " + ", ".join(cautions)
        notes.append(line)
    return notes


def ruled_out(kb: KnowledgeBase, forbidden: Forbidden) -> str:
    """What a trap rules out, as the trap table says it: a budget bars a drug that costs more than it a month on its
    own, and a drug within it only beside the plan's other long-term drugs (the budget bites on the plan's total,
    `traps._bites`), said apart; the seed-73 read found fludrocortisone ($12 a month) "ruled out" by a $47 budget,
    then "allowed by every rule" when it started."""
    name = drug_name(kb, forbidden.drug)
    kind, _, limit = forbidden.rule.partition(":")
    if kind == "budget" and kb.drugs[forbidden.drug].monthly_cost_usd <= float(limit):
        return f"{name} (with the plan's other drugs over {forbidden.rule}, {forbidden.step})"
    return f"{name} ({forbidden.rule}, {forbidden.step})"


def render_timeline(kb: KnowledgeBase, year: CareYear, console: Console) -> None:
    """Print persona, traps, family, each phase's events, regimen changes, chains and the final state."""
    p = year.persona
    condition = kb.conditions.get(p.condition)
    title = condition.name.en if condition else p.condition
    console.print(f"[bold]{p.persona_id}[/bold] {p.name.en}, {p.sex}, {p.age}, {p.occupation.en}; "
                  f"{p.lifestyle.en}\ncondition: {title} (ICD-11 {p.icd11}); seed {year.seed}")

    traps = Table("trap", "fact", "rules out (rule, care step)", title="trap facts")
    for trap in p.traps:
        barred = ", ".join(ruled_out(kb, f) for f in trap.forbidden) or "-"
        if trap.undermined_advice:
            barred += f" | undermines: {', '.join(trap.undermined_advice)}"
        traps.add_row(trap.category, describe_fact(kb, trap.fact), barred)
    console.print(traps)

    family = Table("relative", "age", "conditions", "drugs", "allergies", "labs", title="family")
    for r in p.family:
        family.add_row(
            f"{r.relation} ({r.name.en})", str(r.age), ", ".join(r.conditions),
            ", ".join(f"{drug_name(kb, d.drug)} {format_number(d.dose)} {d.unit} {d.frequency}" for d in r.drugs),
            ", ".join(a.agent.en for a in r.allergies) or "-",
            ", ".join(describe_fact(kb, lab) for lab in r.labs),
        )
    console.print(family)

    for phase, name in PHASE_NAMES.items():
        table = Table("#", "date", "kind", "facts", "triggered by", title=f"phase {phase}: {name}",
                      show_lines=False)
        for event in (e for e in year.events if e.phase == phase):
            text = describe_event(kb, event)
            notes = choice_notes(kb, condition, event) if condition else []
            if notes:
                text += "\n" + "\n".join(f"  why: {n}" for n in notes)
            table.add_row(str(event.index), event.date, event.kind, text,
                          ", ".join(t.split("-E")[-1] for t in event.triggered_by))
        console.print(table)

    console.print("[bold]regimen changes[/bold]")
    for event_id, fact in regimen_changes(year):
        console.print(f"  {event_id}: {describe_fact(kb, fact)}", highlight=False)

    console.print("[bold]causal chains (3+ events)[/bold]")
    by_id = {e.event_id: e for e in year.events}
    for chain in causal_chains(year):
        steps = " -> ".join(f"{by_id[i].index}:{by_id[i].kind}" for i in chain.event_ids)
        console.print(f"  {steps}  ({chain.span_days} days)", highlight=False)

    if year.events:
        end = state_on(year, year.events[-1].date)
        meds = ", ".join(f"{drug_name(kb, k)} {format_number(v.dose)} {v.unit} {v.frequency}"
                         for k, v in sorted(end.medications.items()))
        console.print(f"[bold]state on {end.date}[/bold]: {meds}", highlight=False)
