"""Offline input: log files and directories read through the same core as the streaming worker."""
