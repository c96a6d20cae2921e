"""Storage: SQLAlchemy rows, Alembic migrations, a group-committing writer and queries."""

# Both row modules load with the package, so ``Base.metadata`` always holds every table.
from corix.storage import orm, orm_web  # noqa: F401
from corix.storage.database import Database, default_url, migrate
from corix.storage.repository import NotFoundError, Repository
from corix.storage.writer import RecordWriter

__all__ = [
    "Database",
    "NotFoundError",
    "RecordWriter",
    "Repository",
    "default_url",
    "migrate",
]
