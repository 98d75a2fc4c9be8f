"""The export flags: where the TF Serving SavedModel goes, and which
signatures it has."""

from absl import flags

flags.DEFINE_string(
    "export_dir", None,
    "Also export a TF Serving SavedModel (the task's signatures, raw text "
    "among them) to a new numbered version folder in this directory.")
flags.DEFINE_enum(
    "export_signatures", "all", ["all", "ids"],
    "all: serving_default (ids; core TensorFlow ops) and serve_text (raw "
    "text; needs TensorFlow Text's ops in the server). ids: "
    "serving_default alone, for a server without TensorFlow Text.")
FLAGS = flags.FLAGS
