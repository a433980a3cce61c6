"""Deciding: typed events in, one verdict per failed checkpoint out.

Enters: :mod:`correlator.core.events` in any order, per source, with ``now_ms`` from the caller. Per-source watermarks
say when a failed checkpoint's window is complete; the case is cut from the evidence around it, the write is linked to
its DataNodes, candidate causes are ranked, and a :class:`~correlator.core.explain.verdict.Verdict` leaves. The words
of the verdict and the version facts behind them come from :mod:`correlator.core.explain`, which knows nothing of this
package.
"""
