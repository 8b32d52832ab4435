"""The two-tower trainer and ReQA evaluation. Installed as `wikipairs.trainer`."""
from .xla_flags import apply_defaults as _apply_xla_defaults

# Before anything imports JAX: XLA reads XLA_FLAGS once, when its backend starts (xla_flags.py).
_apply_xla_defaults()
