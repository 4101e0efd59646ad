"""CUDA embedded in Python (``torch.utils.cpp_extension.load_inline`` strings): read it, rewrite it, write it back.

- ``literals`` — the string literals holding ``cuda_sources`` / ``cpp_sources``, with exact byte offsets;
- ``cpp_expr`` — the wrapper's C++ launch expressions <-> launch-spec expressions;
- ``wrapper`` — the kernel's ``<<<...>>>`` launch as a ``LaunchContext``, and a recipe's change written back;
- ``adapter`` — a Python ``RewriteRequest`` as a CUDA request, CUDA candidates as Python candidates.
"""
