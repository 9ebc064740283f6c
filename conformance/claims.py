"""The seed claims the corpus was created to check (``conformance/data/claims.yaml``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

CLAIMS_FILE = Path(__file__).parent / "data" / "claims.yaml"


@lru_cache(maxsize=None)
def claims() -> dict[str, str]:
    """Claim ID -> the claim's text."""
    data = yaml.safe_load(CLAIMS_FILE.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data["claims"].items()}


def claim_ids() -> frozenset[str]:
    return frozenset(claims())
