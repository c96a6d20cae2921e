"""Loading pydantic configuration models from YAML with errors that name file, field and line."""

from corix.config.yaml_loader import format_location, load_yaml_model, parse_yaml_model

__all__ = ["format_location", "load_yaml_model", "parse_yaml_model"]
