"""The five roles of the testbed, and what each role is for."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """Listed from the least to the most privileged (the order forms and the CLI show)."""

    FIELD_TESTER = "field_tester"
    RED_TEAMER = "red_teamer"
    ANNOTATOR = "annotator"
    SENIOR_ANNOTATOR = "senior_annotator"
    ADMIN = "admin"

    @property
    def label(self) -> str:
        return ROLE_LABELS[self]


ROLE_LABELS = {
    Role.ADMIN: "Admin",
    Role.RED_TEAMER: "Red teamer",
    Role.FIELD_TESTER: "Field tester",
    Role.ANNOTATOR: "Annotator",
    Role.SENIOR_ANNOTATOR: "Senior annotator",
}

# Least privileged first: forms list roles in this order and preselect the first, so an
# invitation or account never becomes an admin by default.
ROLES_BY_PRIVILEGE = tuple(Role)
LEAST_PRIVILEGED = ROLES_BY_PRIVILEGE[0]

TESTER_ROLES = (Role.RED_TEAMER, Role.FIELD_TESTER)
# Senior annotators label dialogues too; they also review the passes of others.
ANNOTATOR_ROLES = (Role.ANNOTATOR, Role.SENIOR_ANNOTATOR)

HOME_OF_ROLE = {
    Role.ADMIN: "/admin",
    Role.RED_TEAMER: "/tester",
    Role.FIELD_TESTER: "/tester",
    Role.ANNOTATOR: "/annotate",
    Role.SENIOR_ANNOTATOR: "/senior",
}
