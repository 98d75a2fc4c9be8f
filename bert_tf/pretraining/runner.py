"""run_pretraining's driver: masked-LM and next-sentence pretraining on the
records create_pretraining_data writes, as the original's run_pretraining.

    check the options -> check the inputs and outputs -> train -> evaluate
    (eval_results.txt with the original's keys)

Checkpoints are model.ckpt-<step> with the original names and adam_m/adam_v
slots; running the same options again resumes from the newest. A record
the input pipeline fails on is named: which file, which record, what is
wrong with it.
"""

import dataclasses
import logging
import os
from typing import Optional

import tensorflow as tf

from bert_tf.files import input_checks, run_lock, storage
from bert_tf.files.eval_results import write_eval_results
from bert_tf.models.pretrainer import BertPretrainer
from bert_tf.objectives.pretraining import PretrainingObjective
from bert_tf.pretraining.dataset import find_bad_record, pretraining_dataset
from bert_tf.training import distribution
from bert_tf.runs import run_setup
from bert_tf.training import option_checks
from bert_tf.runs import run_files
from bert_tf.training.trainer import TrainingOptions, create_trainer

logger = logging.getLogger(__name__)

EVAL_RESULTS_FILE = "eval_results.txt"


@dataclasses.dataclass
class PretrainingOptions:
  """A pretraining run; each field is the flag of the same name."""
  input_file: str  # a glob, or comma-separated
  output_dir: str
  # None: the model directory's that --init_checkpoint names (run_setup).
  bert_config_file: Optional[str] = None
  init_checkpoint: Optional[str] = None
  # Not read: copied into --output_dir, which then is a model directory.
  vocab_file: Optional[str] = None
  do_train: bool = False
  do_eval: bool = False
  train_batch_size: int = 32
  eval_batch_size: int = 8
  max_seq_length: int = 128
  max_predictions_per_seq: int = 20
  num_train_steps: int = 100000
  num_warmup_steps: int = 10000
  max_eval_steps: int = 100
  # Records shuffled at once (the original's 100); 0: none.
  shuffle_buffer_size: int = 100
  learning_rate: float = 5e-5
  optimizer: str = "adamw"
  seed: Optional[int] = None
  # Loop, precision and checkpoint options; num_train_steps is set from
  # the field above.
  training: TrainingOptions = dataclasses.field(
      default_factory=lambda: TrainingOptions(num_train_steps=0))


def run_pretraining(options, strategy):
  """Pretrains and evaluates as the options say.

  Args:
    options: PretrainingOptions.
    strategy: the tf.distribute.Strategy to train on.

  Returns:
    The evaluation's results (None without do_eval).

  Raises:
    ValueError: a bad option, input file, record or checkpoint, named.
  """
  _check_options(options)
  model = run_setup.resolve_run_model(
      options.init_checkpoint, options.bert_config_file, options.vocab_file,
      None, options.max_seq_length, needs_vocab=False)
  run_files.check_model_to_use(options.do_train, model.init_checkpoint,
                               options.output_dir, "evaluate")
  input_files = input_checks.input_files(options.input_file)
  model_files = run_setup.model_files(model)
  run_files.check_run_outputs(
      options.output_dir, [EVAL_RESULTS_FILE],
      [*(("--input_file", path) for path in input_files),
       *model.input_files()], model.source, model_files=model_files)
  with run_lock.owned_directory(options.output_dir, "--output_dir",
                               owned=distribution.is_chief(strategy)):
    return _train_and_evaluate(options, strategy, model, input_files,
                               model_files)


def _check_options(options):
  """Raises ValueError for options out of range."""
  if not options.do_train and not options.do_eval:
    raise ValueError("At least one of `do_train` or `do_eval` must be True.")
  option_checks.check_at_least_one(options, (
      "train_batch_size", "eval_batch_size", "max_eval_steps",
      "num_train_steps", "max_seq_length", "max_predictions_per_seq"))
  option_checks.check_not_negative(options, ("num_warmup_steps",
                                             "shuffle_buffer_size"))


def _train_and_evaluate(options, strategy, model, input_files, model_files):
  """run_pretraining's work, once every input and output is checked and
  the output directory is this run's."""
  config = model.config

  def dataset(is_training):
    return pretraining_dataset(
        input_files, options.max_seq_length, options.max_predictions_per_seq,
        options.train_batch_size if is_training else options.eval_batch_size,
        is_training=is_training,
        shuffle_buffer_size=options.shuffle_buffer_size, seed=options.seed,
        num_workers=distribution.num_workers(strategy),
        vocab_size=config.vocab_size)

  train_data = dataset(True) if options.do_train else None
  eval_data = dataset(False) if options.do_eval else None
  logger.info("*** Input Files ***")
  for input_file in input_files:
    logger.info("  %s", input_file)
  trainer = create_trainer(
      strategy, lambda: BertPretrainer(config), PretrainingObjective(),
      options.output_dir, dataclasses.replace(
          options.training, num_train_steps=options.num_train_steps),
      options.learning_rate, options.num_warmup_steps, options.optimizer,
      options.seed, model.source,
      options.train_batch_size if options.do_train else None)
  storage.makedirs(options.output_dir)
  if trainer.is_chief:
    # Once the checkpoint to go on from has loaded: the model is this one.
    run_files.write_model_files(options.output_dir, model_files)

  def on_the_input(work):
    """work(); where the input pipeline fails on a bad record (which
    TensorFlow's error does not name), reads the inputs to say which file
    and record, and which checkpoint is kept."""
    try:
      return work()
    except (tf.errors.DataLossError, tf.errors.InvalidArgumentError) as error:
      logger.error("The input pipeline failed: %s",
                   error.message.strip().splitlines()[0])
      problem = find_bad_record(input_files, options.max_seq_length,
                                options.max_predictions_per_seq,
                                config.vocab_size)
      if problem is None:
        raise
      kept = trainer.checkpoints.kept
      raise ValueError(
          f"{problem} (the checkpoints in --output_dir are kept, the newest "
          f"{kept[-1]})" if kept else f"{problem} (no checkpoint was written "
          f"yet)") from None

  if options.do_train:
    on_the_input(lambda: trainer.train(train_data))
  if not options.do_eval:
    return None
  results = on_the_input(
      lambda: trainer.evaluate(eval_data, options.max_eval_steps))
  if trainer.is_chief:
    write_eval_results(os.path.join(options.output_dir, EVAL_RESULTS_FILE),
                       results)
  return results
