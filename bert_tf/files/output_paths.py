"""Checks, before any work, that a program's outputs can be written and
destroy nothing the user had.

Every program calls check_outputs with its output and input paths, each
with the flag that named it, so that a wrong flag is reported at once, in
one line naming the flag, rather than after the work or by overwriting an
input:

    check_outputs(outputs=[("--output_file", "out.tfrecord")],
                  inputs=[("--input_file", "corpus.txt"),
                          ("--vocab_file", "vocab.txt")])
"""

import os

from bert_tf.files import storage


def check_outputs(outputs=(), inputs=(), output_dirs=()):
  """Raises ValueError, naming the flag, unless every output is safe.

  Args:
    outputs: (flag, path) pairs of files to write. Each must be a regular
      file or absent (a symlink counts as its target), under a directory that
      exists or can be created, and must not be one of the inputs nor another
      output.
    inputs: (flag, path) pairs of files read (globs already expanded).
    output_dirs: (flag, path) pairs of directories to write into: each must
      be a directory or absent, creatable, and neither an output file nor
      under one. A symlink counts as its target: written through, and a
      dangling one's target made.
  """
  for flag, path in [*outputs, *output_dirs]:
    if not str(path):
      raise ValueError(f"{flag} is empty: it must name a path")
  for flag, path in output_dirs:
    kind = storage.kind_of_file(path)
    if kind != "a directory" and (kind or storage.exists(path)):
      raise ValueError(f"{flag}={path} is {kind or 'a file'}, not a "
                       f"directory")
    _check_creatable(flag, path, storage.resolved(path))
  _check_files_and_directories_apart(outputs, output_dirs)
  identities = {}
  for flag, path in inputs:
    identities.setdefault(_identity(path), (flag, path, "an input"))
  for flag, path in outputs:
    target = storage.resolved(path)
    kind = storage.kind_of_file(target)
    if kind is not None:
      raise ValueError(f"{flag}={path} is {kind}, not a regular file; "
                       f"refusing to replace it")
    _check_creatable(flag, path, os.path.dirname(target))
    identity = _identity(path)
    if identity in identities:
      other_flag, other_path, what = identities[identity]
      raise ValueError(f"{flag}={path} is the same file as {other_flag}="
                       f"{other_path}; refusing to overwrite {what}")
    identities[identity] = (flag, path, "another output")


def _check_files_and_directories_apart(outputs, output_dirs):
  """An output directory may not be an output file, nor lie under one:
  the run would do all its work, then fail making the directory."""
  for dir_flag, directory in output_dirs:
    directory_at = os.path.abspath(storage.resolved(directory))
    for flag, path in outputs:
      file_at = os.path.abspath(storage.resolved(path))
      if directory_at == file_at:
        raise ValueError(f"{dir_flag}={directory} is where {flag} writes "
                         f"{path}: one path cannot be a directory and a file")
      if directory_at.startswith(file_at + os.sep):
        raise ValueError(f"{dir_flag}={directory} is inside {path}, which "
                         f"{flag} writes as a file")


def _identity(path):
  """What two paths share when they name the same file: the device and
  inode of an existing local file (through symlinks and hard links), else
  the resolved path."""
  target = storage.resolved(path)  # where a write lands: "..", links
  if not storage.is_url(path):
    try:
      status = os.stat(target)
      return ("inode", status.st_dev, status.st_ino)
    except OSError:
      pass
  return ("path", target)


def _check_creatable(flag, path, directory):
  """The nearest existing ancestor of `directory` must be a writable
  directory (missing ones in between are created when writing)."""
  if storage.is_url(directory) or not directory:
    return
  ancestor = os.path.abspath(directory)
  while not os.path.exists(ancestor):
    ancestor = os.path.dirname(ancestor)
  if not os.path.isdir(ancestor):
    raise ValueError(f"{flag}={path}: {ancestor} is a file, not a directory")
  if not os.access(ancestor, os.W_OK | os.X_OK):
    raise ValueError(f"{flag}={path}: cannot write in {ancestor} "
                     f"(permission denied)")


def output_for_input(input_file, output_dir, extension):
  """<output_dir>/<input file name><extension>: a program's one output per
  input file (--output_dir)."""
  return os.path.join(output_dir, os.path.basename(input_file) + extension)


def outputs_for_inputs(input_files, output_dir, extension):
  """{input file: output_for_input(...)}, one output per input file.

  Raises:
    ValueError: two input files would write the same output, naming both.
  """
  outputs = {}
  for input_file in input_files:
    output = output_for_input(input_file, output_dir, extension)
    if output in outputs.values():
      clash = next(name for name, path in outputs.items() if path == output)
      raise ValueError(f"{input_file} and {clash} would both write {output}; "
                       f"give input files distinct names")
    outputs[input_file] = output
  return outputs
