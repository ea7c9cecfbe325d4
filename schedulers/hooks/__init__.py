"""Hooks: extensions of the decision core (kill-and-requeue, policy selection, classes, fairness).

A hook sees the core's events and may act in a pass (kill, swap orders,
request wake-ups) through the core's declared methods; it never talks to a
backend.
"""
