"""Loading pydantic configuration models from YAML with errors that name file, field and line;
writing files whole or not at all."""

from corix.config.atomic_files import atomic_open, atomic_path, write_atomically
from corix.config.csv_inputs import read_csv_rows
from corix.config.json_inputs import json_object_from_env, jsonl_records
from corix.config.templates import BoundedSandbox, render_bounded
from corix.config.yaml_loader import (
    Location,
    compose_yaml,
    format_location,
    line_for,
    load_yaml_model,
    parse_yaml_document,
    parse_yaml_model,
    read_config_text,
    validation_problem,
    validation_summary,
)

__all__ = [
    "BoundedSandbox",
    "Location",
    "atomic_open",
    "atomic_path",
    "compose_yaml",
    "format_location",
    "json_object_from_env",
    "jsonl_records",
    "line_for",
    "load_yaml_model",
    "parse_yaml_document",
    "parse_yaml_model",
    "read_config_text",
    "read_csv_rows",
    "render_bounded",
    "validation_problem",
    "validation_summary",
    "write_atomically",
]
