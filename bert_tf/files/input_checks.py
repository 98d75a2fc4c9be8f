"""Inputs checked before any work: a flag's file exists and is a file, text
is UTF-8 (a bad line is named), and a glob matches something."""



from bert_tf.files import storage


def check_input_file(flag_name, path):
  """Raises ValueError, naming the flag, unless `path` is an existing file
  (a directory or a FIFO is not)."""
  kind = storage.kind_of_file(path)
  if kind is not None:
    raise ValueError(f"{flag_name}={path} is {kind}, not a file")
  if not storage.exists(path):
    raise ValueError(f"{flag_name}={path} does not exist")


_BYTE_ORDER_MARK = b"\xef\xbb\xbf"


def utf8_lines(path):
  """(number from 1, line) of a text file's lines, split at "\\n" only, as
  readline splits them, each decoded as UTF-8; a UTF-8 byte order mark
  that starts the file (as editors on Windows write one) is not text.

  Raises:
    ValueError: a line that is not UTF-8, naming the file and line.
  """
  for number, _, line in utf8_lines_with_bytes(path):
    yield number, line


def utf8_lines_with_bytes(path):
  """(number from 1, the line's bytes, the line) as utf8_lines gives
  them, for a reader that counts bytes (the bytes keep a byte order mark)."""
  with storage.open_file(path, "rb") as reader:
    for number, raw_line in enumerate(reader, start=1):
      text = raw_line.removeprefix(_BYTE_ORDER_MARK) if number == 1 \
          else raw_line
      try:
        yield number, raw_line, text.decode("utf-8")
      except UnicodeDecodeError as error:
        raise ValueError(f"{path}:{number}: not UTF-8 text "
                         f"({error.reason})") from None


def utf8_text(path):
  """A text file's whole text, as utf8_lines reads its lines (a byte
  order mark that starts it is not text); bytes that are not UTF-8 name
  the file and line."""
  with storage.open_file(path, "rb") as reader:
    return decode_utf8(reader.read(), path)


def decode_utf8(data, path):
  """A file's bytes as text (see utf8_text), naming the file and line."""
  try:
    return data.decode("utf-8-sig")
  except UnicodeDecodeError as error:
    line = data[:error.start].count(b"\n") + 1
    raise ValueError(f"{path}: line {line} is not UTF-8 text "
                     f"({error.reason})") from None


def first_undecodable_line(path):
  """The number of the first line of a file that is not UTF-8 ("?" if
  none), for an error that names it."""
  with storage.open_file(path, "rb") as reader:
    for number, line in enumerate(reader, start=1):
      try:
        line.decode("utf-8")
      except UnicodeDecodeError:
        return number
  return "?"


def input_files(patterns, flag_name="--input_file"):
  """The files comma-separated globs name, each glob's matches sorted.

  Args:
    patterns: "a.txt,dir/*.txt" or a list of globs, as the original's flags.
    flag_name: the flag named in errors.

  Raises:
    ValueError: a glob matches nothing, or a matched file is empty
      or not a regular file.
  """
  if isinstance(patterns, str):
    patterns = patterns.split(",")
  files = []
  for pattern in patterns:
    matched = storage.glob(pattern)
    if not matched:
      raise ValueError(f"{flag_name}: {pattern} matches no file")
    for path in matched:
      kind = storage.kind_of_file(path)
      if kind is not None:
        raise ValueError(f"{flag_name}: {path} is {kind}, not a file")
      if storage.size(path) == 0:
        raise ValueError(f"{flag_name}: {path} is empty")
    files.extend(matched)
  return files
