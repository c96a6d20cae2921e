"""corix's schema migrations (Alembic scripts in ``versions``)."""

HEAD_REVISION = "label_plan"
"""The newest migration's revision: a schema at it needs no upgrade, which
:func:`corix.storage.database.migrate` tells without importing Alembic. A new migration
changes it (``tests/storage/test_storage.py`` checks it is Alembic's head)."""
