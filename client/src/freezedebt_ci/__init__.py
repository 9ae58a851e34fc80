"""freezedebt-ci: evidence accounting for patches, a pytest plugin and a CI command line.

The functions here are pure and use only the standard library; the Freeze Debt server calls
the same ones, so an offline ``freezedebt-ci delta`` and the server agree byte for byte.
"""

from .changes import Change, changes_from_objects, parse_name_status, touched_paths
from .errors import InputError, Problem
from .evidence import parse_evidence, read_evidence
from .ledger import Freeze, LedgerEvent, diff_ledgers, ledger_history, parse_ledger, read_ledger
from .outcomes import Buckets, Evidence
from .policy import Policy, read_policy
from .report import compute_report, report_json
from .signatures import failure_shape, failure_signature

__version__ = "0.1.0"

__all__ = [
    "Buckets",
    "Change",
    "Evidence",
    "Freeze",
    "InputError",
    "LedgerEvent",
    "Policy",
    "Problem",
    "changes_from_objects",
    "compute_report",
    "diff_ledgers",
    "failure_shape",
    "failure_signature",
    "ledger_history",
    "parse_evidence",
    "parse_ledger",
    "parse_name_status",
    "read_evidence",
    "read_ledger",
    "read_policy",
    "report_json",
    "touched_paths",
]
