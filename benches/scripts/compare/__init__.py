"""The peers, checks and report of compare.py (see its docstring)."""
