"""The Nsight Compute (``ncu``) backend, one module per job.

``profiler`` (``NcuProfiler``: runs ncu, reads its reports), ``argv`` (the command line), ``run_errors``
(exit code and log → typed errors), ``report_reader`` (``.ncu-rep`` via ``ncu_report``), ``isolated``
(that reader in a child process), ``csv`` (raw-page CSV exports), ``mapping`` +
``knowledge/data/metric_maps/ncu.toml`` (raw metric names → canonical model), ``units`` (units → SI),
``tensor`` (tensor FLOPs from SASS opcode counts), ``locate`` (finding ncu and ``ncu_report``).
Importing the package runs and imports nothing; ``profilers.get_profiler("ncu")`` loads the backend.
"""
