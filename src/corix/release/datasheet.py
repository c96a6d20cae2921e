"""The release's datasheet and data statement, written from the record itself.

Sections follow *Datasheets for Datasets* (Gebru et al.) and *Data Statements for NLP*
(Bender and Friedman), cut to what the record can say; what it cannot (demographics,
language variety) is stated as not collected rather than guessed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from corix.release.pii import NOT_LOOKED_FOR
from corix.report import words
from corix.storage import RunRecord

__all__ = ["ReleaseStats", "render_datasheet"]


@dataclass
class ReleaseStats:
    """What the released rows hold, counted as they are written."""

    cells: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    sources: Counter[str] = field(default_factory=Counter)
    testers: set[str] = field(default_factory=set)
    respondents: set[str] = field(default_factory=set)
    annotators: dict[str, set[str]] = field(default_factory=dict)
    guidelines: set[str] = field(default_factory=set)
    redactions: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)

    def count(self, table: str, row: Mapping[str, Any]) -> None:
        """Count one released row (pseudonyms already in place)."""
        self.rows[table] += 1
        if table == "sessions":
            self.cells[(row["application"], row["scenario"], row["level"])] += 1
            self.sources[row["source"]] += 1
            if row.get("tester"):
                self.testers.add(row["tester"])
        elif table == "questionnaire" and not row.get("simulated"):
            self.respondents.add(row["respondent"])
        elif table == "passes":
            self.annotators.setdefault(row["annotator_kind"], set()).add(row["annotator"])
            if row.get("guideline_version"):
                self.guidelines.add(row["guideline_version"])


def render_datasheet(
    stats: ReleaseStats,
    *,
    title: str,
    runs: Sequence[RunRecord],
    settling: str,
    detectors: list[tuple[str, list[str]]],
    kept: int,
    masked_applications: bool,
    license_id: str,
) -> str:
    """The datasheet and data statement as Markdown."""
    applications = sorted({app for app, _, _ in stats.cells})
    scenarios = sorted({scenario for _, scenario, _ in stats.cells})
    levels = sorted({level for _, _, level in stats.cells})
    kinds = ", ".join(f"{len(names)} {kind}" for kind, names in sorted(stats.annotators.items()))
    run_names = ", ".join(f"{run.name} ({run.id})" for run in runs)
    redacted = ", ".join(f"{n} {entity}" for entity, n in stats.redactions.most_common())
    lines = [
        f"# {title}",
        "",
        "A dataset of dialogues between testers and AI applications, recorded and annotated "
        "with corix (NIST ARIA levels and scenarios, CoRIx measurement). This datasheet and "
        "data statement were generated from the record.",
        "",
        "## Motivation and composition",
        "",
        f"- Runs: {run_names}.",
        f"- Sessions: {stats.rows['sessions']}; turns: {stats.rows['turns']}; questionnaire "
        f"answers: {stats.rows['questionnaire']}.",
        f"- Applications tested: {len(applications)} "
        f"({'masked by pseudonyms' if masked_applications else ', '.join(applications)}).",
        f"- Scenarios: {', '.join(words(s) for s in scenarios)}.",
        f"- Levels: {', '.join(words(level) for level in levels)}.",
        "- Who played the user: "
        + ", ".join(f"{n} {words(source)}" for source, n in sorted(stats.sources.items()))
        + ".",
        "",
        "| application | scenario | level | sessions |",
        "|---|---|---|---|",
        *(
            f"| {app} | {words(scenario)} | {words(level)} | {n} |"
            for (app, scenario, level), n in sorted(stats.cells.items())
        ),
        "",
        "## People",
        "",
        f"- Testers (people): {len(stats.testers)}; people answering questionnaires: "
        f"{len(stats.respondents)}.",
        f"- Annotators by kind: {kinds or 'none'}.",
        "- People are named by stable salted pseudonyms (`person-…`); the same person has the "
        "same pseudonym in every role.",
        "",
        "## Annotation process",
        "",
        f"- Annotation passes: {stats.rows['passes']} answer rows (`passes.csv`), one per "
        "annotator, pass and repeat: labels are kept disaggregated, disagreements are not "
        "voted away.",
        f"- Guideline versions: {', '.join(sorted(stats.guidelines)) or 'none recorded'}.",
        f"- Settled labels (`settled_labels.csv`): each annotator's repeats settled by the "
        f"rule `{settling}`, under the specification in `measurement.json`.",
        f"- Senior resolutions: {stats.rows['resolutions']} (`resolutions.csv`).",
        "",
        "## Anonymization",
        "",
        *(f"- {name} looked for: {'; '.join(kinds)}." for name, kinds in detectors),
        f"- Not looked for by any detector: {'; '.join(NOT_LOOKED_FOR)}.",
        "- Every identifier a detector found anywhere in the release was then replaced "
        "wherever it recurs: in any case, with any separators (`D123-4567` and "
        "`d1234567`), followed by a possessive, and for a person's name also each of "
        "its words alone.",
        f"- Redactions: {redacted or 'none'}; findings a reviewer kept as not personal: {kept}.",
        "- Every redaction was listed in a review file and confirmed by a person before this "
        "release was written. Replacements are placeholders such as `[EMAIL_ADDRESS-…]`; the "
        "same identifier always gets the same placeholder.",
        "",
        "## Data statement",
        "",
        "- Curation rationale: every finished session of the runs above, none selected out.",
        "- Language variety: as written by testers and applications; not detected or recorded.",
        "- Speaker (tester) and annotator demographics: not collected.",
        "- Speech situation: text chat with an application under test, at the levels above "
        "(model testing: scripted prompts; red teaming: adversarial testers; field testing: "
        "ordinary use).",
        "",
        "## Known limitations",
        "",
        "- Automatic detection misses personal information written in unusual ways; names are "
        'found only when known to the record, named by a cue ("my name is …", "Dr …"), '
        "listed by the team, recognized by Presidio's language model when it was used, or "
        "recurring after one of these found them.",
        "- Defect rates and CoRIx values are relative measurements of these applications, "
        "these scenarios and these annotators; they are not absolute safety ratings.",
        "- Simulated users and LLM annotators are models; their turns and labels are marked "
        "by `source` and `annotator_kind`.",
        "",
        "## License and files",
        "",
        f"- License: {license_id}.",
        "- `MANIFEST.json` lists every file with its SHA-256 checksum and row count.",
        '- Load a table with Hugging Face `datasets`: `load_dataset("path/to/release", "turns")`.',
    ]
    return "\n".join(lines) + "\n"
