"""Holds a directory as a run holds its --output_dir, until killed:

    python hold_directory.py <directory>

prints "held" once it is the directory's owner (helpers.
hold_in_another_process waits for that line).
"""

import sys
import time

from bert_tf.files import run_lock


def main():
  with run_lock.owned_directory(sys.argv[1], "--output_dir"):
    print("held", flush=True)
    time.sleep(600)


if __name__ == "__main__":
  main()
