"""Writes a multilingual document corpus from the system's translation catalogs.

Benchmarks need real text in many scripts, and no corpus can be downloaded
here; a Linux system carries thousands of translated message catalogs in
/usr/share/locale. This writes the translations (never the English
originals) of the --languages languages with the most catalog data: each
catalog a document (one message per line, its whitespace runs made single
spaces, a blank line after it), keeping --keep of every 9 catalogs (5: about
28 MB on Debian 12).

    .venv/bin/python benchmarks/multilingual_corpus.py --output_file=m.txt
"""

import argparse
import gettext
import os

LOCALE_DIR = "/usr/share/locale"


def parse_args():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--output_file", required=True)
  parser.add_argument("--languages", type=int, default=26)
  parser.add_argument("--keep", type=int, default=5,
                      help="catalogs kept of every 9")
  return parser.parse_args()


def catalog_size(language):
  return sum(os.path.getsize(os.path.join(directory, name))
             for directory, _, names in os.walk(os.path.join(LOCALE_DIR,
                                                             language))
             for name in names)


def catalogs(language):
  """The translations of each of a language's catalogs."""
  directory = os.path.join(LOCALE_DIR, language, "LC_MESSAGES")
  for name in sorted(os.listdir(directory)):
    if not name.endswith(".mo"):
      continue
    with open(os.path.join(directory, name), "rb") as reader:
      try:
        messages = gettext.GNUTranslations(reader)._catalog  # pylint: disable=protected-access
      except (OSError, UnicodeDecodeError):
        continue  # a catalog in another encoding or damaged
    lines = [" ".join(text.split()) for key, text in messages.items()
             if key and isinstance(text, str) and text.strip()]
    if lines:
      yield lines


def main():
  args = parse_args()
  languages = sorted(
      (language for language in os.listdir(LOCALE_DIR)
       if os.path.isdir(os.path.join(LOCALE_DIR, language, "LC_MESSAGES"))),
      key=catalog_size, reverse=True)[:args.languages]
  documents = [lines for language in languages
               for lines in catalogs(language)]
  with open(args.output_file, "w", encoding="utf-8") as writer:
    for index, lines in enumerate(documents):
      if index % 9 < args.keep:
        writer.write("\n".join(lines) + "\n\n")
  print(f"{args.output_file}: {os.path.getsize(args.output_file) / 1e6:.1f} "
        f"MB, {len(languages)} languages: {' '.join(languages)}")


if __name__ == "__main__":
  main()
