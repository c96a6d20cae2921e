"""HTTP routes, one module per role (plus sign-in). Each router carries its role guard."""

from corix.web.routes import admin, annotator, auth, senior, tester

__all__ = ["admin", "annotator", "auth", "senior", "tester"]
