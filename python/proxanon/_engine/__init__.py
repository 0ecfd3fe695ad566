"""The native adapters: the only modules that import ``proxanon._core``.

``kernels`` sits at the bottom of the package (the constants, exception types and small
kernels the lower layers read); the other modules sit above the result types and run the
engine: typed options and statistics, the runs, the proofs shared by ``advise`` and
``partition``, the audit's counts and the substitution. This file imports nothing, so that
importing ``kernels`` never loads the modules above it.
"""
