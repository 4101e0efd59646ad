"""perfagent as a Model Context Protocol server (``perfagent mcp``), for coding agents.

Needs the optional ``mcp`` extra (``pip install "perfagent[mcp]"``); nothing else in perfagent imports
this package, so the core installs and runs without the SDK.
"""
