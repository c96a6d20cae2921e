"""Stores of the web testbed: the queries behind accounts, series, assignments and annotation.

The web's services keep the rules (who may do what, blinding, the flow of a session) and
call these for every read and write. Functions that must share one unit of work take a
:data:`Transaction` opened with :func:`transaction`; they take and return records, never
rows.
"""

from corix.storage.transactions import Duplicate, Transaction, WriteGate, lock_series, transaction

__all__ = ["Duplicate", "Transaction", "WriteGate", "lock_series", "transaction"]
