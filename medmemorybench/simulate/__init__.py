"""The ground truth: personas with traps and family, and their dated causal care years."""

from medmemorybench.simulate.cohort import DEFAULT_ENCOUNTERS, iter_cohort, simulate_patient
from medmemorybench.simulate.models import CareYear, Event, Persona, Trap
from medmemorybench.simulate.timeline import PatientState, state_on

__all__ = [
    "DEFAULT_ENCOUNTERS",
    "CareYear",
    "Event",
    "PatientState",
    "Persona",
    "Trap",
    "iter_cohort",
    "simulate_patient",
    "state_on",
]
