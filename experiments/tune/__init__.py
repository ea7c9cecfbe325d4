"""``bftune tune``: one command that tells a cluster admin how to set EASY for their machine."""
