"""The decision core: jobs, machine state, queue orders, policies and the pass algorithms.

Pure Python, no clock and no I/O: a pass is a function of the state and ``now``.
Everything that decides (starts, kills, requeues, rejects, wake-ups) lives
here or in ``bftune.schedulers.hooks``; the drivers only translate.
"""
