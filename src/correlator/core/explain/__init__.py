"""Explaining: the verdict's shape and everything said about it, decided or not.

Enters: verdicts (and, for the outlook, the events that show a schedule). Leaves: the verdict's wire shape, its
text, the known HDFS issues and remediations per root cause, recurrence across verdicts, the next risky window and
what each remediation would have changed, and the timeline a report draws. The deciding package
(:mod:`correlator.core.correlate`) stands on this one; nothing here imports it.
"""
