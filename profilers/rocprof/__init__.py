"""The AMD backend (rocprofv3, rocprof v1, rocprof-compute), one module per job.

``profiler`` (``RocprofProfiler``: build, trace, counter passes), ``reader`` (format detection, reading
any AMD output, joining passes), ``argv`` (hipcc/rocprofv3/rocprof-compute command lines), ``passes``
(counters → replay passes), ``csv`` / ``compute`` / ``rocpd`` (readers per format), ``names`` (kernel
names), ``dispatch`` (dispatch records, outlier dropping), ``metrics`` (metric map evaluation),
``device`` (device and peaks), ``occupancy`` (theoretical occupancy), ``assemble`` (``Profile``
assembly). Importing the package runs and imports nothing; ``profilers.get_profiler("rocprof")`` loads
the backend.
"""
