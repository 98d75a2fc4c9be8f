"""JSON files read whole: bad JSON or the wrong kind of value is one line
naming the file (and the line and column)."""

import json

from bert_tf.files import input_checks


def read_json_object(json_file):
  """The JSON object a file holds (see parse_json_object)."""
  return parse_json_object(input_checks.utf8_text(json_file), json_file)


def read_json(json_file):
  """The JSON value a file holds (an object, a list, ...; see
  parse_json)."""
  return parse_json(input_checks.utf8_text(json_file), json_file)


def parse_json(text, json_file):
  """A JSON value from a file's text; bad JSON names the file and line."""
  try:
    return json.loads(text)
  except json.JSONDecodeError as error:
    raise ValueError(f"{json_file}: not valid JSON (line {error.lineno}, "
                     f"column {error.colno}): {error.msg}") from None
  except RecursionError:
    raise ValueError(f"{json_file}: JSON nested too deeply to read") from None


def parse_json_object(text, json_file):
  """A JSON object from a file's text (see parse_json)."""
  values = parse_json(text, json_file)
  if not isinstance(values, dict):
    raise ValueError(f"{json_file}: expected a JSON object, got "
                     f"{type(values).__name__}")
  return values
