"""Staged ncu profiling (issue 27): time every launch, then counters in tiers for the kernels that matter.

``select`` chooses kernels from stage 1's time table, ``assemble`` puts the runs together, ``run``
drives ncu. See ``run``'s docstring for the stages.
"""
