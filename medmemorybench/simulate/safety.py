"""Which drugs a patient may be given on a day, and every rule that says why not.

One verdict covers everything that binds a prescriber: the six trap facts (allergy, the long-term
drug's interactions, the disease history's contraindications, the dose-form preference, the diet habit,
the budget), patient rules from the knowledge base (age, kidney function, sex, the patient's own
diseases), interactions with every drug being taken, and what the year's complications and adverse
effects have forbidden since. Bars block a drug; cautions let it through with a warning; dose caps
shorten its ladder. Every block names its rule (see `rule_text` for what each rule id means).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.knowledge.models import DOSES_PER_DAY, DoseForm, DoseSpec, Drug, RiskFactors, Text
from medmemorybench.simulate.models import EconomicFact, Persona, Trap, TrapCategory


@dataclass(frozen=True)
class Constraint:
    """One trap option in the form the safety check needs (before or after it becomes a `Trap`)."""

    category: TrapCategory
    option: str
    budget_usd: int | None = None
    indication: str | None = None
    """For a long-term drug: the history condition it is taken for."""


@dataclass(frozen=True)
class Block:
    """A rule that bars (or, as a caution, qualifies) a drug."""

    rule: str
    trap: TrapCategory | None = None


@dataclass
class Patient:
    """What a prescriber knows of the patient on the day: who they are, and what is on record so far."""

    age: int
    sex: str
    condition: str
    """Main condition key (for a relative, possibly a history-condition key)."""
    constraints: list[Constraint] = field(default_factory=list)
    """The trap facts (disclosed or not: the simulator never lets a doctor harm a patient)."""
    egfr: float | None = None
    """Latest measured eGFR."""
    taking: set[str] = field(default_factory=set)
    """Drugs being taken."""
    complications: set[str] = field(default_factory=set)
    """Complication keys on record."""
    toxicities: set[str] = field(default_factory=set)
    """Kinds of harm the patient has had from a drug."""
    intolerant: set[str] = field(default_factory=set)
    """Drugs stopped for an adverse effect in this patient (never restarted)."""
    spending_usd: float = 0.0
    """What the long-term drugs being taken cost a month (a budget caps it; courses and one-offs are paid once)."""
    given_once: set[str] = field(default_factory=set)
    """One-off treatments already administered this year (not repeated)."""
    labs: dict[str, float] = field(default_factory=dict)
    """Latest measured value of each lab a patient rule reads (`RuleWhen.lab_below`: TPMT activity)."""

    @property
    def conditions(self) -> list[str]:
        """Main condition and history conditions."""
        out = [self.condition]
        for c in self.constraints:
            if c.category == "disease_history":
                out.append(c.option)
            if c.indication:
                out.append(c.indication)
        return out

    def with_constraint(self, constraint: Constraint) -> Patient:
        """A copy with one more trap constraint."""
        return Patient(self.age, self.sex, self.condition, [*self.constraints, constraint], self.egfr,
                       set(self.taking), set(self.complications), set(self.toxicities), set(self.intolerant),
                       self.spending_usd, set(self.given_once), dict(self.labs))


@dataclass(frozen=True)
class Verdict:
    """What the rules say about one drug for one patient on one day."""

    blocks: tuple[Block, ...]
    cautions: tuple[Block, ...]
    formulation: tuple[DoseForm, DoseSpec] | None
    """The first formulation the patient can take (None: none, which is then one of the blocks)."""
    max_daily_dose: float | None
    """A dose cap from a patient rule (None: none)."""
    start_dose: float | None = None
    """A lower dose a new start begins at, from a patient rule (warfarin at 80 or over; None: the ladder's)."""
    options: tuple[tuple[DoseForm, DoseSpec], ...] = ()
    """Every formulation the patient can take under the cap, `formulation` first (a use with a dose of its own
    picks among them: amoxicillin 500 mg a dose for pneumonia, `prescribing.prescribe`)."""

    @property
    def is_allowed(self) -> bool:
        return not self.blocks

    @property
    def traps(self) -> list[TrapCategory]:
        """Trap categories among the blocks, once each, in order."""
        return list(dict.fromkeys(b.trap for b in self.blocks if b.trap))

    def doses(self, formulation: tuple[DoseForm, DoseSpec] | None = None) -> list[float]:
        """The ladder of the formulation (default: the first one) under the dose cap."""
        formulation = formulation or self.formulation
        if formulation is None:
            return []
        _, spec = formulation
        per_day = DOSES_PER_DAY[spec.frequency]
        return [d for d in spec.doses() if self.max_daily_dose is None or d * per_day <= self.max_daily_dose + 1e-9]


def _fits_cap(spec: DoseSpec, cap: float) -> bool:
    """Whether a formulation has a dose whose daily total is within `cap`."""
    return any(dose * DOSES_PER_DAY[spec.frequency] <= cap + 1e-9 for dose in spec.doses())


def spacing_of(rules: list) -> str | None:
    """The least often any of these patient rules lets a drug be taken (None: as its formulation says)."""
    return min((r.frequency for r in rules if r.frequency is not None), key=DOSES_PER_DAY.__getitem__, default=None)


def _spaced(formulation: tuple[DoseForm, DoseSpec], frequency: str | None) -> tuple[DoseForm, DoseSpec]:
    """A formulation taken no more often than `frequency`, on the same doses (immediate-release pramipexole once a
    day below an eGFR of 30, not three times)."""
    form, spec = formulation
    if frequency is None or DOSES_PER_DAY[spec.frequency] <= DOSES_PER_DAY[frequency]:
        return formulation
    return form, spec.model_copy(update={"frequency": frequency})


def _usable(form: DoseForm, spec: DoseSpec, kb: KnowledgeBase, preference: str, one_off: bool = False) -> bool:
    """Whether a formulation suits a preference (a single dose, `one_off`, is never too frequent)."""
    pref = kb.preferences[preference]
    if form.form in pref.excludes_forms or (form.size is not None and form.size in pref.excludes_sizes):
        return False
    return one_off or pref.max_doses_per_day is None or DOSES_PER_DAY[spec.frequency] <= pref.max_doses_per_day


def suits_preferences(kb: KnowledgeBase, patient: Patient, drug_key: str, formulation: tuple[DoseForm, DoseSpec]
                      ) -> bool:
    """Whether every dosing preference of the patient that binds the drug allows a formulation (a care step's own
    ladder, `Candidate.dosing`: sulfasalazine four times a day for colitis is no regimen for a once-a-day blister
    pack, which keeps the drug's own)."""
    long_term = is_long_term(kb, drug_key)
    return all(_usable(*formulation, kb, c.option) for c in patient.constraints
               if c.category == "medication_preference" and (long_term or not kb.preferences[c.option].long_term_only))


def _bars_single_dose(kb: KnowledgeBase, drug: Drug, preference: str) -> bool:
    """Whether a preference bars even one dose of a drug (a form or size it cannot take, a drug or harm it rules out),
    not only a regimen taken several times a day."""
    pref = kb.preferences[preference]
    return drug.key in kb.expand(pref.excludes_drugs) or bool(set(drug.toxicities) & set(pref.excludes_toxicities)) \
        or not any(_usable(form, spec, kb, preference, one_off=True) for form, spec in drug.formulations())


def _needs_blood_tests_sooner(kb: KnowledgeBase, drug: Drug, interval_days: int | None) -> bool:
    """Whether a drug needs blood taken more often than every `interval_days`: its routine checks, or the recheck
    after a start or a dose change (lithium: a level after one week, NICE CG185, though every 3 months once stable;
    the seed-31 read started it in a patient who can give blood only every three months)."""
    return interval_days is not None and any(
        min(m.every_days, m.recheck_days or m.every_days) < interval_days and kb.labs[m.lab].kind == "lab"
        for m in drug.monitoring)


def is_long_term(kb: KnowledgeBase, drug_key: str, regimen: str | None = None) -> bool:
    """Paid month after month (not a course or a one-off, which are paid once); `regimen` overrides the
    drug's own for a use-specific regimen (a prednisolone burst)."""
    return (regimen or kb.drugs[drug_key].regimen) == "chronic"


def forbidden_by(kb: KnowledgeBase, constraint: Constraint) -> dict[str, str]:
    """Every drug one trap option bars on its own, with the rule id (cached per knowledge base)."""
    cache = kb.memo.setdefault("forbidden_by", {})
    if constraint not in cache:
        cache[constraint] = _compute_forbidden(kb, constraint)
    return cache[constraint]


def _contraindicated(kb: KnowledgeBase, key: str, level: str) -> dict[str, str]:
    """Drugs a condition or history bars (or cautions against) at `level`, indexed once per knowledge base."""
    index = kb.memo.get("contraindicated")
    if index is None:
        index = kb.memo["contraindicated"] = {}
        for rule in kb.contraindications:
            into = index.setdefault((rule.history, rule.level), {})
            drugs = sorted(kb.expand([*rule.classes, *rule.drugs]))
            into.update(dict.fromkeys(drugs, f"contraindication:{rule.history}"))
    return index.get((key, level), {})


def _compute_forbidden(kb: KnowledgeBase, constraint: Constraint) -> dict[str, str]:
    option = constraint.option
    if constraint.category == "allergy":
        group = kb.allergy_groups[option]
        return dict.fromkeys(sorted(kb.expand([*group.classes, *group.drugs])), f"allergy:{option}")
    if constraint.category == "medication_history":
        out = {other: f"interaction:{option}+{other}" for other, rule in kb.interaction_partners.get(option, [])
               if rule.action == "avoid"}
        if constraint.indication:
            out.update({d: r for d, r in _contraindicated(kb, constraint.indication, "contraindicated").items()
                        if d not in out})
        out.pop(option, None)
        return out
    if constraint.category == "disease_history":
        return _contraindicated(kb, option, "contraindicated")
    if constraint.category == "medication_preference":
        pref = kb.preferences[option]
        named = kb.expand(pref.excludes_drugs)
        return {drug.key: f"preference:{option}" for drug in kb.drugs.values()
                if (not pref.long_term_only or is_long_term(kb, drug.key))
                and (drug.key in named or set(drug.toxicities) & set(pref.excludes_toxicities)
                     or not any(_usable(form, spec, kb, option) for form, spec in drug.formulations()))}
    if constraint.category == "diet_preference":
        return dict.fromkeys(sorted(kb.expand(kb.habits[option].conflicts_with)), f"diet:{option}")
    if constraint.category == "lifestyle_economic":
        profile = kb.economic_profiles[option]
        budget = constraint.budget_usd if constraint.budget_usd is not None else 0
        out = {drug.key: f"budget:{budget}" for drug in kb.drugs.values()
               if drug.monthly_cost_usd > budget and is_long_term(kb, drug.key)}
        for drug in kb.drugs.values():
            no_visit = all(f.form in profile.excludes_forms for f in drug.forms)
            needs_tests = _needs_blood_tests_sooner(kb, drug, profile.min_blood_test_interval_days)
            if drug.key not in out and (no_visit or needs_tests):
                out[drug.key] = f"time:{option}"
        return out
    raise ValueError(f"unknown trap category {constraint.category!r}")


def allergy_cautioned(kb: KnowledgeBase, group_key: str) -> frozenset[str]:
    """Drugs an allergy group does not bar but gives only with its warning (an ARB after ACE inhibitor angioedema)."""
    caution = kb.allergy_groups[group_key].caution
    return kb.expand(caution.drugs) if caution is not None else frozenset()


def harm_allergies(kb: KnowledgeBase, patient: Patient) -> list[str]:
    """Allergy groups the year's own harms have put on record (`AllergyGroup.from_harm`): a harm of the group's
    kind had on a drug the group bars (angioedema on lisinopril)."""
    return [group.key for group in kb.allergy_groups.values() if group.from_harm in patient.toxicities
            and patient.intolerant & kb.expand([*group.classes, *group.drugs])]


def patient_of(persona: Persona, egfr: float | None = None) -> Patient:
    """The prescriber's view of a persona with every trap fact known (for safety answers about them)."""
    return Patient(persona.age, persona.sex, persona.condition, constraints_of(persona.traps), egfr)


def constraints_of(traps: list[Trap]) -> list[Constraint]:
    """The safety constraints a persona's trap facts make."""
    return [Constraint(t.category, t.option, t.fact.monthly_budget_usd if isinstance(t.fact, EconomicFact) else None,
                       t.indication) for t in traps]


def _rule_applies(kb: KnowledgeBase, rule, patient: Patient) -> bool:  # noqa: ANN001
    when = rule.when
    if when.min_age is not None and patient.age < when.min_age:
        return False
    if when.max_age is not None and patient.age > when.max_age:
        return False
    if when.sex is not None and patient.sex != when.sex:
        return False
    if when.egfr_below is not None and (patient.egfr is None or patient.egfr >= when.egfr_below):
        return False
    if when.risk_factors is not None and risk_factor_count(kb, when.risk_factors, patient) < when.risk_factors.at_least:
        return False
    if any(patient.labs.get(lab, below) >= below for lab, below in when.lab_below.items()):
        return False  # (a result not yet measured binds nothing)
    return not when.conditions or any(c in when.conditions for c in patient.conditions)


def completed_risk_rules(kb: KnowledgeBase, drug_key: str, patient: Patient) -> list[str]:
    """The risk-factor rules barring a drug being taken that starting `drug_key`, one of their factors, would make bind
    (aripiprazole beside bupropion in a heavy drinker: two things that lower the seizure threshold, the bar the other
    way round)."""
    out = []
    for taken in sorted(patient.taking - {drug_key}):
        for rule in _rules_naming(kb, taken):
            factors = rule.when.risk_factors
            if rule.level != "avoid" or factors is None or drug_key not in kb.expand(factors.taking) \
                    or _rule_applies(kb, rule, patient):
                continue
            with_it = Patient(patient.age, patient.sex, patient.condition, patient.constraints, patient.egfr,
                              patient.taking | {drug_key})
            if _rule_applies(kb, rule, with_it):
                out.append(rule.key)
    return out


def risk_factor_count(kb: KnowledgeBase, factors: RiskFactors, patient: Patient) -> int:
    """How many of a rule's risk factors the patient has: conditions and histories, diet habits, each drug named
    being taken (the long-term drug they came with included), and kidney function below the factors' eGFR."""
    habits = {c.option for c in patient.constraints if c.category == "diet_preference"}
    history_drug = {c.option for c in patient.constraints if c.category == "medication_history"}
    kidneys = factors.egfr_below is not None and patient.egfr is not None and patient.egfr < factors.egfr_below
    return (len(set(factors.conditions) & set(patient.conditions)) + len(set(factors.habits) & habits)
            + len(kb.expand(factors.taking) & (patient.taking | history_drug)) + kidneys)


def _rules_naming(kb: KnowledgeBase, drug: str) -> list:
    """The patient rules that name this drug (indexed once per knowledge base)."""
    index = kb.memo.get("rules_by_drug")
    if index is None:
        index = kb.memo["rules_by_drug"] = {}
        for rule in kb.patient_rules:
            for key in sorted(kb.expand(rule.drugs)):
                index.setdefault(key, []).append(rule)
    return index.get(drug, [])


def applicable_rules(kb: KnowledgeBase, patient: Patient, drug: str) -> list:
    """The patient rules that bind this patient and name this drug."""
    return [rule for rule in _rules_naming(kb, drug) if _rule_applies(kb, rule, patient)]


def _trap_of_history(patient: Patient, key: str) -> TrapCategory | None:
    for c in patient.constraints:
        if c.category == "disease_history" and c.option == key:
            return "disease_history"
        if c.indication == key:
            return "medication_history"
    return None


def verdict(kb: KnowledgeBase, drug_key: str, patient: Patient, regimen: str | None = None) -> Verdict:
    """Every rule that bars or qualifies `drug_key` for `patient` today (given on `regimen`, default its own)."""
    drug: Drug = kb.drugs[drug_key]
    blocks: list[Block] = []
    cautions: list[Block] = []
    preference = None
    long_term = is_long_term(kb, drug_key, regimen)
    one_off = (regimen or drug.regimen) == "one_off"  # (a single dose: how often a regimen is taken does not matter)
    for c in patient.constraints:
        if c.category == "medication_preference" and (long_term or not kb.preferences[c.option].long_term_only):
            preference = c.option
        if c.category != "medication_history":  # the long-term drug binds through its interactions, below
            rule = forbidden_by(kb, c).get(drug_key)
            binds_long_term_only = rule is not None and rule.startswith("budget:") or (
                c.category == "medication_preference" and kb.preferences[c.option].long_term_only)
            frequency_only = one_off and c.category == "medication_preference" and rule is not None \
                and not _bars_single_dose(kb, drug, c.option)  # (asked only of a single dose a preference bars)
            if rule and not (binds_long_term_only and not long_term) and not frequency_only:
                blocks.append(Block(rule, c.category))
        if c.category == "diet_preference" and drug_key in kb.expand(kb.habits[c.option].cautions):
            cautions.append(Block(f"diet:{c.option}", c.category))
        if c.category == "allergy" and drug_key in allergy_cautioned(kb, c.option):
            cautions.append(Block(f"allergy:{c.option}", c.category))
        if (c.category == "lifestyle_economic" and c.budget_usd is not None and drug_key not in patient.taking
                and long_term
                and patient.spending_usd + drug.monthly_cost_usd > c.budget_usd):
            blocks.append(Block(f"budget:{c.budget_usd}", c.category))
    # (a reaction had this year on a drug the group bars is on record as if told: an ARB after lisinopril angioedema)
    told = {c.option for c in patient.constraints if c.category == "allergy"}
    cautions += [Block(f"allergy:{key}") for key in harm_allergies(kb, patient)
                 if key not in told and drug_key in allergy_cautioned(kb, key)]
    history_drug = next((c.option for c in patient.constraints if c.category == "medication_history"), None)
    for taken in sorted(patient.taking | ({history_drug} if history_drug else set())):
        if taken == drug_key:
            continue
        for other, rule in kb.interaction_partners.get(taken, []):
            if other == drug_key:
                trap: TrapCategory | None = "medication_history" if taken == history_drug else None
                (blocks if rule.action == "avoid" else cautions).append(Block(f"interaction:{taken}+{drug_key}", trap))
    for key in patient.conditions:
        for level, into in (("contraindicated", blocks), ("caution", cautions)):
            rule_id = _contraindicated(kb, key, level).get(drug_key)
            if rule_id:
                into.append(Block(rule_id, _trap_of_history(patient, key)))
    blocks += [Block(f"rule:{key}") for key in completed_risk_rules(kb, drug_key, patient)]
    cap = start = None
    form_rules: dict[str, str] = {}  # release -> the rule that bars that form only
    rules = applicable_rules(kb, patient, drug_key)
    for rule in rules:
        if rule.level == "avoid" and rule.release is not None:
            form_rules.setdefault(rule.release, rule.key)
        elif rule.level == "avoid":
            blocks.append(Block(f"rule:{rule.key}"))
        elif rule.level == "caution":
            cautions.append(Block(f"rule:{rule.key}"))
        elif rule.level == "start_dose":  # (told as a caution: "at your age we start lower")
            cautions.append(Block(f"rule:{rule.key}"))
            start = rule.start_dose if start is None else min(start, rule.start_dose)
        else:
            cap = rule.max_daily_dose if cap is None else min(cap, rule.max_daily_dose)
    for comp_key in sorted(patient.complications):
        comp = next((c for c in kb.conditions[patient.condition].complications if c.key == comp_key), None)
        if comp and drug_key in kb.expand(comp.forbids):
            blocks.append(Block(f"complication:{comp_key}"))
    blocks.extend(Block(f"toxicity:{kind}") for kind in drug.toxicities if kind in patient.toxicities)
    if drug_key in patient.intolerant:
        blocks.append(Block(f"adverse:{drug_key}"))
    spacing = spacing_of(rules) if rules else None
    formulations = drug.formulations() if spacing is None else [_spaced(f, spacing) for f in drug.formulations()]
    usable = [f for f in formulations if preference is None or _usable(*f, kb, preference, one_off)]
    # (a kidney regimen is no regimen for normal kidneys: with no other form left, the preference bars the drug)
    if cap is None and any(f[0].capped_only for f in usable) \
            and not (usable := [f for f in usable if not f[0].capped_only]):
        blocks.append(Block(f"preference:{preference}", "medication_preference"))
    if form_rules:  # (a form a rule bars leaves the others; with none of them usable the rule bars the drug)
        kept = [f for f in usable if f[0].release not in form_rules]
        if usable and not kept:
            blocks.extend(Block(f"rule:{key}") for key in dict.fromkeys(form_rules[f[0].release] for f in usable))
        usable = kept
    # (a dose cap chooses the formulation that fits under it, before it bars the drug: amoxicillin 250 mg every
    # 12 hours below an eGFR of 30, not no amoxicillin)
    fitting = tuple(f for f in usable if cap is None or _fits_cap(f[1], cap))
    formulation = fitting[0] if fitting else usable[0] if usable else None
    result = Verdict(tuple(dict.fromkeys(blocks)), tuple(dict.fromkeys(cautions)), formulation, cap, start, fitting)
    if result.is_allowed and not result.doses():
        capped = next(rule for rule in rules if rule.level == "max_dose")
        return Verdict((Block(f"rule:{capped.key}"),), result.cautions, formulation, cap, start, fitting)
    return result


def rule_text(kb: KnowledgeBase, rule_id: str, drug: str | None = None, bars: bool | None = None) -> Text | None:
    """The knowledge base's own words for why a rule id bars or qualifies a drug (None for trap rules the
    renderer phrases from the trap fact itself): the text of the rule that names `drug` (a contraindication id
    names only the history) and, where `bars` is given, of a bar (True) or a caution (False)."""
    kind, _, key = rule_id.partition(":")
    if kind == "rule":
        return next(r.reason for r in kb.patient_rules if r.key == key)
    if kind == "contraindication":
        level = None if bars is None else "contraindicated" if bars else "caution"
        rule = kb.contraindication_rule(key, drug, level) if drug is not None else None
        return rule.reason if rule is not None else next((r.reason for r in kb.contraindications if r.history == key),
                                                         None)
    if kind == "interaction":
        taken, _, other = key.partition("+")
        rules = [rule for partner, rule in kb.interaction_partners.get(taken, []) if partner == other]
        action = None if bars is None else "avoid" if bars else "caution"
        rules = [r for r in rules if r.action == action] or rules
        return kb.interaction_effect(rules[0], taken, other) if rules else None
    if kind == "diet":
        return kb.habits[key].reason
    if kind == "allergy" and bars is False:  # (a bar is phrased from the trap fact; a caution has its own words)
        caution = kb.allergy_groups[key].caution
        return caution.reason if drug in allergy_cautioned(kb, key) and caution is not None else None
    return None
