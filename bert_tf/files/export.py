"""The SavedModel writer every task's export goes through.

write_saved_model writes <export_dir>/<version>/, the layout TF Serving
watches: versions are integers and each export takes the next free one. The
SavedModel is written under a held temporary name (<version>.tmp-<hex>,
which TF Serving ignores) and renamed into place when complete, so a server
never loads half an export. A task supplies the tf.Module (its model,
tokenizer, label names, ...) and the signatures.
"""

import logging

import tensorflow as tf

from bert_tf.files import atomic_outputs, storage

logger = logging.getLogger(__name__)


def write_saved_model(module, export_dir, signatures):
  """Exports `module` with `signatures` as the next version in export_dir.

  Args:
    module: a tf.Module holding everything the signatures use.
    export_dir: the model's base directory; a numbered version goes inside.
    signatures: {name: tf.function with an input_signature}; TF Serving
      answers "serving_default" when a request names none.

  Returns:
    The path of the version directory written.
  """
  storage.makedirs(export_dir)
  atomic_outputs.remove_stale_temporaries(export_dir, r"\d+")
  version = _next_version(export_dir)
  final = f"{export_dir.rstrip('/')}/{version}"
  with atomic_outputs.held_temporary(final, directory=True) as temporary:
    tf.saved_model.save(module, temporary, signatures=signatures)
    storage.rename(temporary, final)
  logger.info("Exported the SavedModel to %s", final)
  return final


def _next_version(export_dir):
  """One more than the largest numbered version already there (1 if none)."""
  versions = [int(name) for name in tf.io.gfile.listdir(export_dir)
              if name.strip("/").isdigit()]
  return max(versions, default=0) + 1
