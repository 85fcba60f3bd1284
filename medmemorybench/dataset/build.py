"""Building the benchmark in memory: simulate, render, add noise, ask questions, and lay out the rows."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from medmemorybench.dataset.audit import age_distribution, audit_questions, format_table, question_only
from medmemorybench.dataset.audit import cohort_prior as cohort_prior_probe
from medmemorybench.dataset.schema import LANGUAGES, PERSONAS_SPLIT, RENDERED, config_name, split_name
from medmemorybench.dataset.variety import format_variety, stream_variety
from medmemorybench.errors import InputError
from medmemorybench.knowledge.base import KnowledgeBase
from medmemorybench.models.base import Backbone
from medmemorybench.questions.cohort import CohortPrior
from medmemorybench.questions.facts import FactFinder
from medmemorybench.questions.generate import generate_renderings
from medmemorybench.questions.models import Question
from medmemorybench.questions.phrasing import load_phrasing
from medmemorybench.render.conversation import SessionRenderer
from medmemorybench.render.fields import text_of
from medmemorybench.render.models import Session, regular_session_id
from medmemorybench.render.noise import render_family_sessions, render_health_sessions
from medmemorybench.render.stream import checkpoints_of, insert_noise, split_by_checkpoint
from medmemorybench.render.templates import Templates, load_templates
from medmemorybench.simulate import iter_cohort
from medmemorybench.simulate.describe import describe_fact
from medmemorybench.simulate.models import CareYear
from medmemorybench.simulate.store import care_year_json

PRIOR_DRAWS = 4
"""At most this many draws of the cohort prior's coins (`cohort_questions`; docs/benchmarks.md has how many the
default build's seeds took). A cohort that still fails is refused by the audit gate, naming the probe."""

Rows = dict[str, dict[str, list[dict]]]
"""config -> split -> rows."""


@dataclass(frozen=True)
class BuildOptions:
    """What to build."""

    seed: int = 0
    personas: int = 20
    encounters: int = 100
    health_sessions: int = 100
    """Health-consultation noise sessions per patient (mixed mode)."""
    family_sessions: int = 100
    """Family proxy consultations per patient, spread over the relatives (mixed mode)."""
    language: str = "en"
    """`en`, `zh` or `both` (the library's default is English alone; `medmemorybench build` renders both)."""
    renderer: str = "template"
    """`template`, or `llm:<backbone spec>` when sessions were written by LLM agents."""


@dataclass
class PatientBuild:
    """Everything built for one patient."""

    year: CareYear
    regular: list[Session]
    mixed: list[Session]
    questions: list[Question]
    checkpoints: list[int]
    turn_counts: Counter = field(default_factory=Counter)
    """Patient turns and the stock-filler ones among them, as rendered (`dataset/variety.py`)."""
    language: str = "en"


@dataclass
class BuiltDataset:
    """The rows of every config and split, with the statistics the card reports."""

    options: BuildOptions
    rows: Rows
    stats: dict = field(default_factory=dict)
    fingerprint: str = ""


def languages_of(option: str) -> tuple[str, ...]:
    """The languages `--language` asks for (`both`: every language the package renders).

    Raises:
        InputError: for an unknown language.
    """
    if option == "both":
        return LANGUAGES
    if option not in LANGUAGES:
        raise InputError(f"--language: '{option}' is not one of {', '.join(LANGUAGES)}, both")
    return (option,)


def build_patient(kb: KnowledgeBase, templates: Templates, year: CareYear, options: BuildOptions,
                  backbone: Backbone | None = None, prior: CohortPrior | None = None) -> PatientBuild:
    """Render one patient's year in the templates' language (by LLM agents when a backbone is given), add noise,
    ask the questions."""
    return build_renderings(kb, {templates.language: templates}, year, options, backbone, prior)[templates.language]


def build_renderings(kb: KnowledgeBase, templates: dict[str, Templates], year: CareYear, options: BuildOptions,
                     backbone: Backbone | None = None, prior: CohortPrior | None = None) -> dict[str, PatientBuild]:
    """One patient's year in every language of `templates` (language -> phrasing): the same visits, noise and
    questions, each rendered in its language (the plans and the question choice are language-free)."""
    return ask_questions(kb, year, render_patient(kb, templates, year, options, backbone), prior)


Rendered = dict[str, tuple[list[Session], list[Session], Counter]]
"""One patient's sessions per language: (regular, mixed, turn counts)."""


def render_patient(kb: KnowledgeBase, templates: dict[str, Templates], year: CareYear, options: BuildOptions,
                   backbone: Backbone | None = None) -> Rendered:
    """One patient's regular sessions and the mixed stream (noise inserted) in every language of `templates`."""
    from medmemorybench.simulate.rng import rng_for

    pid = year.persona.persona_id
    out: Rendered = {}
    for language, phrasing in templates.items():
        counts: Counter = Counter()
        if backbone is not None:
            from medmemorybench.render.llm import LLMSessionRenderer

            regular = LLMSessionRenderer(kb, phrasing, year, backbone).render_year()
        else:
            renderer = SessionRenderer(kb, phrasing, year)
            regular = renderer.render_year()
            counts.update(renderer.stats)
        health = render_health_sessions(kb, phrasing, year, options.health_sessions,
                                        rng_for(year.seed, pid, "noise/health"), counts)
        family = render_family_sessions(kb, phrasing, year, options.family_sessions,
                                        rng_for(year.seed, pid, "noise/family"), counts)
        mixed = insert_noise(regular, health + family, rng_for(year.seed, pid, "noise/insert"))
        out[language] = (regular, mixed, counts)
    return out


def ask_questions(kb: KnowledgeBase, year: CareYear, rendered: Rendered,
                  prior: CohortPrior | None = None) -> dict[str, PatientBuild]:
    """The patient's questions over their rendered sessions, in every language rendered."""
    checkpoints = checkpoints_of(len(next(iter(rendered.values()))[0]))
    questions = generate_renderings(kb, year, {lang: regular for lang, (regular, _, _) in rendered.items()},
                                    checkpoints, prior)
    return {lang: PatientBuild(year, regular, mixed, questions[lang], checkpoints, counts, lang)
            for lang, (regular, mixed, counts) in rendered.items()}


def no_step(_phase: str, _done: int, _total: int) -> None:
    """An `on_step` that reports nowhere (the default)."""


def cohort_questions(kb: KnowledgeBase, rendered: list[tuple[CareYear, Rendered]], prior: CohortPrior,
                     on_step: Callable[[str, int, int], None] = no_step,
                     ) -> tuple[list[dict[str, PatientBuild]], int]:
    """Every patient's questions, and the number of draws of the prior's coins it took (`on_step`: each patient
    asked, as `build_dataset`'s).

    The cohort prior thins each drug's commoner answer by coin (`questions.cohort`), and then evens the drugs whose
    asked answers still lean beyond a fair coin's (`CohortPrior.lopsided`), and the yes and no answers of all drugs
    together where they lean over the cohort (`CohortPrior.leaning`); a draw can still, by chance,
    leave the other patients' answers for a drug (or their opposite) predicting a patient's beyond the audit's
    bar over the whole cohort, or leave a patient's own other questions predicting an IG answer (the drug named in
    an SUA question: it is taken, so "yes") beyond the `question_only` bar. The published questions must not hold
    that: the coins are then drawn again (a seeded sequence: the same seed gives the same draw), at most
    `PRIOR_DRAWS` times, until none of the IG probes nor the MQ cohort one (advisory: it does not stop a build)
    fails; where none passes them all, the first draw the IG probes pass is kept. The card records the draws.
    """
    kept: tuple[list[dict[str, PatientBuild]], int] | None = None
    for draw in range(PRIOR_DRAWS):
        prior.draw = draw
        phase = "asking questions, patient" if draw == 0 else f"asking again (coin draw {draw + 1}), patient"
        builds = []
        on_step(phase, 0, len(rendered))
        for year, sessions in rendered:
            builds.append(ask_questions(kb, year, sessions, prior))
            on_step(phase, len(builds), len(rendered))
        language = next(iter(builds[0])) if builds else "en"
        keys = {text_of(drug.name, language): key for key, drug in kb.drugs.items()}  # (coins keyed by the drug)
        asked = [q for build in builds for q in build[language].questions]
        builds = _without(builds, prior.lopsided(asked, lambda name, keys=keys: keys.get(name, name)))
        builds = _without(builds, prior.leaning([q for build in builds for q in build[language].questions]))
        first = [q.model_dump() for build in builds for q in build[language].questions]
        probes = cohort_prior_probe(first, language) + [r for r in question_only(first, language) if r.scope == "IG"]
        if all(r.passed for r in probes):
            return builds, draw + 1
        if kept is None and all(r.passed for r in probes if r.scope == "IG"):
            kept = (builds, draw + 1)
    return kept or (builds, PRIOR_DRAWS)


def _without(builds: list[dict[str, PatientBuild]], dropped: set[str]) -> list[dict[str, PatientBuild]]:
    """The builds less the questions `dropped` (query ids: the same in every language)."""
    if not dropped:
        return builds
    return [{lang: replace(patient, questions=[q for q in patient.questions if q.query_id not in dropped])
             for lang, patient in build.items()} for build in builds]


def cohort_prior(kb: KnowledgeBase, years: list[CareYear], options: BuildOptions) -> CohortPrior:
    """How often each drug is allowed across these patients (`questions.cohort`), from their years alone (drug keys:
    the same in every language)."""
    language = languages_of(options.language)[0]
    phrasing, words = load_phrasing(language), load_templates(language)
    return CohortPrior.of(options.seed, (FactFinder(kb, year, phrasing, words, {}) for year in years),
                          checkpoints_of(options.encounters))


def persona_row(kb: KnowledgeBase, year: CareYear) -> dict:
    """The `personas` row of one patient."""
    p = year.persona
    condition = kb.conditions[p.condition]
    return {
        "persona_id": p.persona_id,
        "condition": p.condition,
        "condition_name": condition.name.en,
        "icd11": p.icd11,
        "group": condition.group.key,
        "sex": p.sex,
        "age": p.age,
        "traps": [{"category": t.category, "option": t.option, "detail": describe_fact(kb, t.fact),
                   "forbidden_drugs": t.forbidden_drugs, "disclosed_in": _disclosed_in(year, t)} for t in p.traps],
        "family": [{"relation": r.relation, "sex": r.sex, "age": r.age, "conditions": r.conditions,
                    "drugs": [d.drug for d in r.drugs]} for r in p.family],
        "events": [{"event_id": e.event_id, "date": e.date, "phase": e.phase, "kind": e.kind,
                    "triggered_by": e.triggered_by,
                    "facts_json": json.dumps([f.model_dump() for f in e.facts], ensure_ascii=False)}
                   for e in year.events],
        "care_year_json": care_year_json(year),
    }


def _disclosed_in(year: CareYear, trap) -> str | None:  # noqa: ANN001
    """The regular session where a trap fact is disclosed (None if the year is too short to hold it)."""
    for event in year.events:
        if trap.fact in event.facts:
            return regular_session_id(event.event_id)
    return None


def _stream_rows(patient: PatientBuild, stream: list[Session]) -> dict[int, dict]:
    by_checkpoint = split_by_checkpoint(stream, patient.checkpoints)
    return {
        c: {
            "persona_id": patient.year.persona.persona_id,
            "checkpoint": c,
            "sessions": [s.model_dump() for s in by_checkpoint[c]],
            "questions": [q.model_dump() for q in patient.questions if q.checkpoint == c],
        }
        for c in patient.checkpoints
    }


def fingerprint_rows(rows: Rows) -> str:
    """SHA-256 of the canonical JSON of every row: equal content, equal fingerprint."""
    digest = hashlib.sha256()
    for config in sorted(rows):
        for split in sorted(rows[config]):
            for row in rows[config][split]:
                digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def build_dataset(
    kb: KnowledgeBase,
    templates: Templates | None,
    options: BuildOptions,
    on_step: Callable[[str, int, int], None] = no_step,
    backbone: Backbone | None = None,
) -> BuiltDataset:
    """Build every config's rows for the cohort (in memory; `export` writes them), in each language of
    `options.language` (English configs `efficient`, `mixed`, `questions`; Chinese `efficient_zh` ...; `personas`
    once).

    Args:
        templates: the phrasing of one language's sessions (None: each language's own templates).
        on_step: called as the build moves, with a phase and its steps done of total ("simulating patient", 3, 20;
            the cohort prior; "rendering patient", 3, 20; then the questions of the whole cohort are asked,
            `cohort_questions`, and each language audited).
        backbone: when given, regular sessions are written by LLM agents through it (with template
            fallback per session); otherwise by the template renderer.
    """
    languages = languages_of(options.language)
    phrasing = {lang: templates if templates is not None and templates.language == lang else load_templates(lang)
                for lang in languages}
    rows: Rows = {config_name(c, lang): {} for lang in languages for c in RENDERED}
    rows["personas"] = {PERSONAS_SPLIT: []}
    turns: Counter = Counter()
    sessions: Counter = Counter()
    by_type: Counter = Counter()
    by_checkpoint: Counter = Counter()
    renderers: Counter = Counter()
    turn_counts: dict[str, Counter] = {lang: Counter() for lang in languages}
    years = []
    on_step("simulating patient", 0, options.personas)
    for year in iter_cohort(kb, options.seed, options.personas, options.encounters):
        years.append(year)
        on_step("simulating patient", len(years), options.personas)
    on_step("estimating what a year gives away without memory (the cohort prior)", 0, 1)
    prior = cohort_prior(kb, years, options)
    rendered = []
    on_step("rendering patient", 0, len(years))
    for year in years:
        rendered.append((year, render_patient(kb, phrasing, year, options, backbone)))
        on_step("rendering patient", len(rendered), len(years))
    builds, prior_draws = cohort_questions(kb, rendered, prior, on_step)
    for year, renderings in zip(years, builds, strict=True):
        for lang, patient in renderings.items():
            renderers.update(s.renderer for s in patient.regular)
            turn_counts[lang].update(patient.turn_counts)
            for base, stream in (("efficient", patient.regular), ("mixed", patient.mixed)):
                config = config_name(base, lang)
                for checkpoint, row in _stream_rows(patient, stream).items():
                    rows[config].setdefault(split_name(checkpoint), []).append(row)
                turns[config] += sum(len(s.turns) for s in stream)
                sessions[config] += len(stream)
            for question in patient.questions:
                rows[config_name("questions", lang)].setdefault(split_name(question.checkpoint), []).append(
                    question.model_dump())
                if lang == languages[0]:
                    by_type[question.query_type] += 1
                    by_checkpoint[question.checkpoint] += 1
        rows["personas"][PERSONAS_SPLIT].append(persona_row(kb, year))
    stats = {
        "personas": options.personas,
        "languages": list(languages),
        "questions": sum(by_type.values()),
        "questions_by_type": dict(sorted(by_type.items())),
        "questions_by_checkpoint": {str(k): v for k, v in sorted(by_checkpoint.items())},
        "sessions": dict(sessions),
        "turns": dict(turns),
        "regular_sessions_by_renderer": dict(sorted(renderers.items())),
        "prior_draws": prior_draws,
        "variety": {}, "filler_share": {}, "variety_table": {}, "audit_table": {}, "audit_failures": [],
    }
    for done, lang in enumerate(languages):
        on_step("measuring variety and auditing, language", done, len(languages))
        streams = [config_name(c, lang) for c in ("efficient", "mixed")]
        variety = {c: stream_variety([r for split in rows[c].values() for r in split], lang) for c in streams}
        share = turn_counts[lang]["filler_turns"] / max(turn_counts[lang]["patient_turns"], 1)
        stats["variety"].update(variety)
        stats["filler_share"][lang] = share
        stats["variety_table"][lang] = format_variety(variety, share)
        questions = [q for split in rows[config_name("questions", lang)].values() for q in split]
        audit = audit_questions(questions, lang)
        stats["audit_table"][lang] = format_table(audit)
        stats["audit_failures"] += [f"{r.probe} ({r.scope}, {lang}): {r.value:.3f} vs {r.threshold:.3f}"
                                    for r in audit if r.blocks]
        if lang == languages[0]:
            stats["evidence_age"] = age_distribution(questions)
    on_step("measuring variety and auditing, language", len(languages), len(languages))
    built = BuiltDataset(options, rows, stats)
    built.fingerprint = fingerprint_rows(rows)
    return built
