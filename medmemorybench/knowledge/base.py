"""`KnowledgeBase`: the loaded catalogue, indexed by key, with lookups that expand class references."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from medmemorybench.knowledge.models import (
    Advice,
    Aliases,
    AllergyGroup,
    CareStep,
    CodeCheck,
    Condition,
    Contraindication,
    DietHabit,
    DoseSpec,
    Drug,
    DrugClass,
    DrugRedFlag,
    EconomicProfile,
    Gists,
    HistoryCondition,
    Illness,
    Interaction,
    Lab,
    MealPattern,
    MedicationPreference,
    Misdiagnosis,
    MoodScreen,
    PatientRule,
    People,
    RelativeTemplate,
    RenalBaseline,
    Score,
    Text,
    Topic,
    UnitWords,
)


@dataclass(frozen=True)
class KnowledgeBase:
    """Every record of the knowledge base, keyed by its identifier."""

    labs: dict[str, Lab]
    classes: dict[str, DrugClass]
    drugs: dict[str, Drug]
    allergy_groups: dict[str, AllergyGroup]
    history_conditions: dict[str, HistoryCondition]
    contraindications: list[Contraindication]
    interactions: list[Interaction]
    advice: dict[str, Advice]
    habits: dict[str, DietHabit]
    meals: dict[str, MealPattern]
    """How a patient eats day to day (diet.yaml `meals`)."""
    preferences: dict[str, MedicationPreference]
    economic_profiles: dict[str, EconomicProfile]
    topics: dict[str, Topic]
    relatives: dict[str, RelativeTemplate]
    conditions: dict[str, Condition]
    people: People
    patient_rules: list[PatientRule]
    renal_baseline: list[RenalBaseline]
    code_checks: list[CodeCheck]
    illnesses: dict[str, Illness]
    gists: Gists
    """What an answer must mention to have stated each disclosed fact (gists.yaml; scoring only)."""
    aliases: Aliases
    """Accepted other names of drugs, labs and diagnoses (aliases.yaml; scoring only)."""
    scores: dict[str, Score] = field(default_factory=dict)
    """Clinical scores findings state (scores.yaml)."""
    unit_words: dict[str, UnitWords] = field(default_factory=dict)
    """How units are said per language where not as written (units.yaml)."""
    mood_screen: MoodScreen | None = None
    """When mood is assessed and what a positive screen calls for (patient_rules.yaml `mood_screen`)."""
    memo: dict = field(default_factory=dict, compare=False, repr=False)
    """Derived indexes computed once per loaded base by the modules that need them (never data)."""

    def expand(self, refs: list[str] | tuple[str, ...]) -> frozenset[str]:
        """Drug keys named by a list of drug or class keys, with the prodrugs of each (a rule on mesalamine binds
        sulfasalazine, which releases it: the seed-37 read started sulfasalazine where mesalamine was barred).
        Memoised per base: the simulator asks it tens of times per visit with the same few rule lists."""
        cache = self.memo.setdefault("expand", {})
        key = tuple(refs)
        if key not in cache:
            cache[key] = self._expand(key)
        return cache[key]

    def _expand(self, refs: tuple[str, ...]) -> frozenset[str]:
        out: set[str] = set()
        for ref in refs:
            if ref in self.drugs:
                out.add(ref)
            else:
                out.update(self.drugs_by_class.get(ref, ()))
        prodrugs = self.prodrugs
        return frozenset(out.union(*(prodrugs[key] for key in out if key in prodrugs)))

    @cached_property
    def prodrugs(self) -> dict[str, tuple[str, ...]]:
        """For each active moiety, the drugs that release it (`Drug.releases`)."""
        by_moiety: dict[str, list[str]] = {}
        for drug in self.drugs.values():
            for moiety in drug.releases:
                by_moiety.setdefault(moiety, []).append(drug.key)
        return {key: tuple(sorted(keys)) for key, keys in by_moiety.items()}

    @cached_property
    def rule_labs(self) -> frozenset[str]:
        """Labs a patient rule reads a result of (`RuleWhen.lab_below`)."""
        return frozenset(lab for rule in self.patient_rules for lab in rule.when.lab_below)

    @cached_property
    def use_dosings(self) -> dict[str, tuple[DoseSpec, ...]]:
        """For every drug, the dose ladders care steps give it for their own use (`Candidate.dosing`)."""
        by_drug: dict[str, list[DoseSpec]] = {}
        for condition in self.conditions.values():
            for step in condition.care_path:
                for candidate in step.candidates:
                    if candidate.dosing is not None:
                        by_drug.setdefault(candidate.drug, []).append(candidate.dosing)
        return {key: tuple(specs) for key, specs in by_drug.items()}

    @cached_property
    def drugs_by_class(self) -> dict[str, tuple[str, ...]]:
        """Drug keys of each class."""
        by_class: dict[str, list[str]] = {}
        for drug in self.drugs.values():
            by_class.setdefault(drug.drug_class, []).append(drug.key)
        return {key: tuple(sorted(keys)) for key, keys in by_class.items()}

    @cached_property
    def interaction_partners(self) -> dict[str, list[tuple[str, Interaction]]]:
        """For every drug, each drug it interacts with and the rule (both directions)."""
        partners: dict[str, list[tuple[str, Interaction]]] = {}
        for rule in self.interactions:
            side_a, side_b = self.expand(rule.a), self.expand(rule.b)
            for one, others in ((side_a, side_b), (side_b, side_a)):
                for drug in one:
                    partners.setdefault(drug, []).extend((other, rule) for other in sorted(others) if other != drug)
        return partners

    @cached_property
    def drug_red_flags(self) -> dict[str, DrugRedFlag]:
        """The illnesses' drug red flags by the harm they warn of (one flag for agranulocytosis, whether a fever with
        pleuritic pain or a sore throat tells it; `validate` keeps one flag per harm)."""
        flags: dict[str, DrugRedFlag] = {}
        for illness in self.illnesses.values():
            for symptom in illness.symptoms:
                if symptom.drug_red_flag is not None:
                    flags.setdefault(symptom.drug_red_flag.toxicity, symptom.drug_red_flag)
        return flags

    def interaction_effect(self, rule: Interaction, one: str, other: str) -> Text:
        """What an interaction does between two drugs (keys): the first of its `by_partner` effects that names
        either, else its general effect."""
        for entry in rule.by_partner:
            if {one, other} & self.expand(entry.partners):
                return entry.effect
        return rule.effect

    def treating_step(self, condition: Condition, misdiagnosis: Misdiagnosis) -> CareStep | None:
        """The care step of the true condition that treats the lab a misdiagnosis' drug treats too (`kept_for`) above a
        threshold (None: none, or no such lab)."""
        if misdiagnosis.kept_for is None or misdiagnosis.drug not in self.drugs:
            return None
        return next((s for s in condition.care_path if s.indication.lab == misdiagnosis.kept_for
                     and s.indication.above is not None), None)

    def keeping_step(self, condition: Condition, misdiagnosis: Misdiagnosis) -> CareStep | None:
        """The treating step (`treating_step`) when it gives a drug of the misdiagnosis drug's class: the drug is kept
        for it at the revision (None: the step gives another class, and the drug is switched to it instead)."""
        step = self.treating_step(condition, misdiagnosis)
        drug_class = self.drugs[misdiagnosis.drug].drug_class if misdiagnosis.drug in self.drugs else None
        if step is None or not any(self.drugs[d].drug_class == drug_class for d in step.drug_keys if d in self.drugs):
            return None
        return step

    def contraindication_rule(self, history: str, drug: str, level: str | None = None) -> Contraindication | None:
        """The drug–disease rule of `history` that names `drug` (itself or its class), at `level` where one is
        given: the rule of that pair, never another rule of the same history (a caution about NSAIDs after a
        stroke is not the triptan rule's text)."""
        rules = [r for r in self.contraindications
                 if r.history == history and drug in self.expand([*r.classes, *r.drugs])]
        return next((r for r in rules if level is None or r.level == level), rules[0] if rules else None)

    def say_unit(self, unit: str, language: str) -> str:
        """How `unit` is said in `language` ("" for a bare number: a ratio, an index)."""
        words = self.unit_words.get(unit)
        said = getattr(words, language, None) if words is not None else None
        return unit if said is None else said

    def therapy_group(self, drug_key: str) -> str:
        """What a drug duplicates: its class's therapeutic group, or its class."""
        cls = self.classes[self.drugs[drug_key].drug_class]
        return cls.group or cls.key

    @cached_property
    def roster(self) -> list[Condition]:
        """Conditions in default-roster order."""
        return sorted(self.conditions.values(), key=lambda c: c.roster)

    def symptom_keys(self) -> dict[str, list[str]]:
        """Every symptom key of a condition or an intercurrent illness, with the conditions and illnesses that have it
        (`illness:<key>`; a symptom's gist is one per key)."""
        owners: dict[str, list[str]] = {}
        for owner, symptoms in [*((c.key, c.symptoms) for c in self.conditions.values()),
                                *((f"illness:{i.key}", i.symptoms) for i in self.illnesses.values())]:
            for symptom in symptoms:
                owners.setdefault(symptom.key, []).append(owner)
        return owners

    def condition(self, key: str) -> Condition:
        """The condition `key`; raises KeyError naming the known ones."""
        try:
            return self.conditions[key]
        except KeyError:
            known = ", ".join(sorted(self.conditions))
            raise KeyError(f"unknown condition '{key}'; known conditions: {known}") from None
