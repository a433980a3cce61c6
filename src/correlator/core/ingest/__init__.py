"""Reading logs: a shipped record in, typed events (or a rejection with a stable reason) out.

Enters: the bytes of one Kafka record or file line, with whatever its shipper said about its origin. Leaves:
:mod:`correlator.core.events` for the correlator, and dead letters for everything that could not be placed. The order
is envelope → multi-line reassembly → prefilter → parse (per log family) → event, with timestamps turned into UTC
epoch milliseconds on the way. Nothing here knows about checkpoints failing or why.
"""
