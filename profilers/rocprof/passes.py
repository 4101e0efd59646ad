"""Split the counters a run needs into replay passes that respect each hardware block's counter limit.

rocprofv3 fails a ``--pmc`` pass outright when its counters do not fit the hardware in one pass (its
``--pmc`` help: "job will fail if entire set of counters cannot be collected in single pass"), so the
application is replayed once per pass. Limits per block come from the metric map
(``[block_limits]``: SQ 8, TA 2, TD 2, TCP 4, TCC 4, CPC 2, CPF 2, SPI 6, GRBM 2, GDS 4 on gfx942, per
Metrix). A counter's block is its name up to the first underscore (``TCC_HIT_sum`` -> TCC; ``SQC_*``
counts against SQ). The planner packs first-fit in the given order, so the result is deterministic and
uses the minimum number of passes, max over blocks of ceil(counters in block / limit).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

UNKNOWN_BLOCK_LIMIT = 1
"""Counters of a block without a known limit get a pass slot each (safe, maybe slower)."""


def block_of(counter: str) -> str:
    """The hardware block a counter belongs to ('TCC_EA0_RDREQ_sum' -> 'TCC', 'SQC_ICACHE_HITS' -> 'SQ')."""
    block = counter.split("_", 1)[0].upper()
    return "SQ" if block == "SQC" else block


def plan_passes(counters: Sequence[str], limits: Mapping[str, int]) -> list[list[str]]:
    """Pack ``counters`` (duplicates removed, order kept) into passes within ``limits``.

    Args:
        counters: counter names as rocprofv3 accepts them.
        limits: block -> counters per pass.

    Returns:
        The passes, each a list of counter names in request order; [] for no counters.
    """
    passes: list[list[str]] = []
    usage: list[Counter[str]] = []
    for counter in dict.fromkeys(counters):
        block = block_of(counter)
        limit = max(1, limits.get(block, UNKNOWN_BLOCK_LIMIT))
        for index, used in enumerate(usage):
            if used[block] < limit:
                passes[index].append(counter)
                used[block] += 1
                break
        else:
            passes.append([counter])
            usage.append(Counter({block: 1}))
    return passes
