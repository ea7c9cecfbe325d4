"""The Batsim driver: typed protocol messages, the message-in/message-out driver, the ZeroMQ loop.

Named ``bftune.schedulers.drivers.batsim``; it is never importable as a bare
``batsim`` (pybatsim's package), because only ``schedulers/`` and the
repository root are ever put on ``sys.path`` by pybatsim's launcher.
"""
