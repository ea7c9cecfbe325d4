"""The two thin drivers of the one decision core: ``local`` (an in-process simulator)
and ``batsim`` (the Batsim protocol).  They translate events and decisions, nothing more."""
