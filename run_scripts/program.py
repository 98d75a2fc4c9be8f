"""How every run script starts and stops.

absl parses the flags, then the script's main runs. An expected error (bad
flags, input, paths or files, raised as ValueError or OSError by the script
or the library, or TensorFlow's NotFound / PermissionDenied for a URL; a
full disk, with what was kept) ends the program with one line on stderr,
`<script>: <what is wrong>`, and exit status 1: a traceback means a bug.
Ctrl-C and SIGTERM (kill, a job scheduler) end it in one line too, with
130 and 143, as a shell reports them, once its `finally` blocks have run
(its held temporaries removed). TensorFlow's C++ start-up lines are
silenced unless asked for (_quiet_tensorflow_start_up). --verbosity=1 also
logs where the error was raised.
"""

import contextlib
import gc
import importlib.abc
import importlib.util
import math
import os
import re
import signal
import sys
import tempfile

from absl import app, flags, logging

# absl's --verbosity or its short name, -v, with one dash or two.
_VERBOSITY_FLAG = re.compile(r"--?(verbosity|v)(=|$)")
# A line of TensorFlow's C++ start-up: absl's note on lines written before
# its logging starts, or a log line below FATAL in either of TensorFlow's
# formats ("2026-12-03 12:49:51.897468: I external/...cc:31] ..." on 2.20,
# "I0000 00:00:1796322886.970923 11296 port.cc:153] ..." on 2.21).
_START_UP_LINE = re.compile(
    rb"WARNING: All log messages before absl::InitializeLog\(\)"
    rb"|(\S+ \S+: )?[IWE]\S* .*\.cc:\d+\] ")


def _quiet_tensorflow_start_up():
  """TensorFlow's C++ start-up lines (no CUDA driver, cuInit, CPU
  instructions, oneDNN) tell a user of these programs nothing; they are
  silenced unless --verbosity / -v is given or TF_CPP_MIN_LOG_LEVEL is
  set below 3. TensorFlow 2.21 writes its first ones while it is imported,
  before it reads the setting: _QuietTensorFlowImport drops those
  (benchmarks/start_up_lines.py prints a run's lines with and without it).
  Run before TensorFlow is imported: every script imports this module
  first."""
  if any(_VERBOSITY_FLAG.match(arg) for arg in sys.argv[1:]):
    return
  if os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3") == "3":
    sys.meta_path.insert(0, _QuietTensorFlowImport())


class _QuietTensorFlowImport(importlib.abc.MetaPathFinder):
  """Runs the first `import tensorflow` with TensorFlow's start-up lines
  dropped from stderr, then leaves sys.meta_path. It finds nothing itself:
  it wraps the loader of the spec the other finders give."""

  def find_spec(self, name, path=None, target=None):
    if name != "tensorflow":
      return None
    sys.meta_path.remove(self)
    spec = importlib.util.find_spec(name)
    if spec is not None:
      run_module = spec.loader.exec_module

      def exec_module(module):
        with _start_up_lines_dropped():
          run_module(module)

      spec.loader.exec_module = exec_module
    return spec


@contextlib.contextmanager
def _start_up_lines_dropped():
  """The process's stderr (file descriptor 2, where C++ writes) caught in
  a temporary file while the block runs, then written back less
  TensorFlow's start-up lines: Python's warnings and logging come
  through."""
  sys.stderr.flush()
  stderr = os.dup(2)
  with tempfile.TemporaryFile() as caught:
    os.dup2(caught.fileno(), 2)
    try:
      yield
    finally:
      sys.stderr.flush()
      os.dup2(stderr, 2)
      os.close(stderr)
      caught.seek(0)
      with open(2, "wb", closefd=False) as restored:
        restored.writelines(
            line for line in caught if not _START_UP_LINE.match(line))


_quiet_tensorflow_start_up()

# pylint: disable=wrong-import-position
from bert_tf.files import storage  # noqa: E402


def run(main, required_flags=(), pass_through_unknown=False):
  """app.run(main), with expected errors as one line and exit status 1.

  pass_through_unknown: flags the script does not define reach main in its
  argv (another tool's options, such as Apache Beam's) instead of failing
  the parse.
  """
  for name in required_flags:
    flags.mark_flag_as_required(name)
  app.run(lambda argv: _call_before_exit(main, argv),
          flags_parser=_parse_known_flags if pass_through_unknown
          else app.parse_flags_with_usage)


def _call_before_exit(main, argv):
  """call(main, argv) with SIGTERM raising Terminated, then the collector
  frozen: every output is complete, and exiting would otherwise walk every
  object TensorFlow made looking for garbage (about a second of every
  run)."""
  global _PROGRAM_PID
  _PROGRAM_PID = os.getpid()
  signal.signal(signal.SIGTERM, _terminate)
  try:
    result = call(main, argv)
  finally:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
  gc.freeze()
  return result


# The exit statuses of a program ended by Ctrl-C (128 + SIGINT) and by
# SIGTERM (128 + SIGTERM), as shells report them.
_INTERRUPTED = 130
_TERMINATED = 143
# The process whose SIGTERM raises Terminated; its forks inherit the
# handler and end as SIGTERM ends them by default.
_PROGRAM_PID = None


class Terminated(BaseException):
  """SIGTERM in the main thread, as Ctrl-C raises KeyboardInterrupt: the
  program unwinds, its `finally` blocks removing what they hold."""


def _terminate(signum, frame):  # pylint: disable=unused-argument
  """The SIGTERM handler: raises Terminated, once (a second SIGTERM does
  not interrupt the unwinding), after killing the worker processes, which
  would otherwise finish all their work before the pool that waits for
  them lets this process end."""
  if os.getpid() != _PROGRAM_PID:  # a fork: it ends as SIGTERM ends it
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return
  signal.signal(signum, signal.SIG_IGN)
  multiprocessing = sys.modules.get("multiprocessing")
  for child in multiprocessing.active_children() if multiprocessing else ():
    child.kill()
  raise Terminated()


def _parse_known_flags(argv):
  """The script's flags parsed; the rest returned, as absl's parser does
  for the script's own flags' errors."""
  try:
    return flags.FLAGS(argv, known_only=True)
  except flags.Error as error:
    sys.stderr.write(f"FATAL Flags parsing error: {error}\n"
                     "Pass --helpshort or --helpfull to see help on flags.\n")
    sys.exit(1)


def call(main, argv):
  """main(argv), turning an expected error into SystemExit(one line)."""
  try:
    check_float_flags()
    result = main(argv)
  except Exception as error:  # pylint: disable=broad-except
    if not (isinstance(error, _expected_errors())
            or storage.is_disk_full(error)):
      raise
    logging.debug("The error was raised here:", exc_info=True)
    message = _one_line(error)
    if storage.is_disk_full(error):
      message += f"; {_what_is_kept()}"
    sys.exit(f"{script_name()}: {message}")
  except (KeyboardInterrupt, Terminated) as stop:
    logging.debug("Stopped here:", exc_info=True)
    how, status = ("terminated", _TERMINATED) \
        if isinstance(stop, Terminated) else ("interrupted", _INTERRUPTED)
    sys.stderr.write(f"{script_name()}: {how}; {_what_is_kept()}\n")
    sys.exit(status)
  return result


def _what_is_kept():
  """For a training run's --output_dir, its newest checkpoint, from which
  the same command resumes; outputs of every program appear only when
  complete, so nothing else is half written (convert_checkpoint's
  --output_dir holds no checkpoint to resume from)."""
  training = "save_checkpoints_steps" in flags.FLAGS
  output_dir = flags.FLAGS["output_dir"].value if training else None
  if not output_dir or "tensorflow" not in sys.modules:
    return "no output was half written"
  from bert_tf.training import checkpoint_manager  # pylint: disable=import-outside-toplevel
  kept = checkpoint_manager.checkpoint_names(output_dir)
  if not kept:
    return f"no checkpoint was written yet in --output_dir={output_dir}"
  return (f"the newest checkpoint kept is {os.path.join(output_dir, kept[-1])}"
          f", and the same command resumes from it")


def check_float_flags():
  """Refuses a float flag that is NaN or infinite (absl parses "nan" and
  "inf"), naming it: no flag of these programs means either, and a NaN
  learning rate trains to NaN weights with exit status 0."""
  for name in flags.FLAGS:
    value = flags.FLAGS[name].value
    if isinstance(value, float) and not math.isfinite(value):
      raise ValueError(f"--{name}={value}: must be a finite number")


def script_name():
  return os.path.splitext(os.path.basename(sys.argv[0]))[0]


def _expected_errors():
  errors = (ValueError, OSError)
  if "tensorflow" in sys.modules:  # never imported just for this
    tf_errors = sys.modules["tensorflow"].errors
    errors += (tf_errors.NotFoundError, tf_errors.PermissionDeniedError)
  return errors


def _one_line(error):
  message = getattr(error, "message", None) or str(error) or \
      type(error).__name__
  return " ".join(message.split())
