"""Static analysis of CUDA code without a GPU, one module per job.

``profiler`` (``StaticProfiler``: ptxas resource usage per kernel plus theoretical occupancy),
``ptxas`` (parsing ``-Xptxas -v``), ``launch_sites`` (launch configurations from a tree-sitter parse),
``demangle`` (kernel names), ``sass_scan`` (does a binary certainly run no tensor-core instruction).
Importing the package runs and imports nothing; ``profilers.get_profiler("static")`` loads the backend.
"""
