"""The local driver: an event-driven simulator with Batsim's semantics."""
