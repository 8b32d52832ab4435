"""The two-tower trainer and ReQA evaluation. Installed as `wikipairs.trainer`."""
from .xla_cpu import apply_defaults as _apply_xla_cpu_defaults

# Before anything imports JAX: XLA reads XLA_FLAGS once, when its CPU backend starts (xla_cpu.py).
_apply_xla_cpu_defaults()
