"""The one fine-tuning runner every task goes through.

    check the options -> read every split the run needs (bad input stops it
    before anything is written) -> features -> train -> evaluate -> predict
    (and score, where the predicted file has answers) -> export

A task (tasks/task.py) supplies what is specific to it; this module does
the rest the same way for all: the original's num_train_steps and warmup,
checkpoints that resume, eval_results.txt with global_step, prediction files
replaced together, and a versioned SavedModel.
"""

import dataclasses
import logging
import os
from typing import Optional

from bert_tf import tokenization
from bert_tf.data import batching
from bert_tf.data.feature_records import write_feature_records
from bert_tf.files import atomic_outputs, export, run_lock, storage
from bert_tf.files.eval_results import eval_results_text
from bert_tf.models.predictor import Predictor
from bert_tf.tasks.task import SplitData
from bert_tf.text.tokenizer import InGraphTokenizer
from bert_tf.training import distribution
from bert_tf.runs import run_setup
from bert_tf.training import option_checks
from bert_tf.runs import run_files
from bert_tf.training.checkpoint_manager import checkpoint_names
from bert_tf.training.trainer import TrainingOptions, create_trainer

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class FineTuningOptions:
  """A fine-tuning run; each field is the flag of the same name."""
  output_dir: str
  # None: the model directory's that --init_checkpoint names (run_setup).
  bert_config_file: Optional[str] = None
  vocab_file: Optional[str] = None
  init_checkpoint: Optional[str] = None
  do_lower_case: Optional[bool] = None
  max_seq_length: int = 128
  do_train: bool = False
  do_eval: bool = False
  do_predict: bool = False
  train_batch_size: int = 32
  eval_batch_size: int = 8
  predict_batch_size: int = 8
  learning_rate: float = 5e-5
  num_train_epochs: float = 3.0
  warmup_proportion: float = 0.1
  # Train on batches of features of similar length, each cut to its own
  # length (and predict so a task that predicts at full length).
  bucket_by_length: bool = False
  export_dir: Optional[str] = None
  # False: the export has serving_default alone, for servers without
  # TensorFlow Text's ops.
  export_text: bool = True
  optimizer: str = "adamw"
  seed: Optional[int] = None
  # LoRA adapters of this rank on every layer's query and value, the rest
  # of the encoder frozen but for the weights --init_checkpoint lacks (a
  # pooler; Trainer.restore); None: none.
  lora_rank: Optional[int] = None
  # Loop, precision and checkpoint options; num_train_steps is computed.
  training: TrainingOptions = dataclasses.field(
      default_factory=lambda: TrainingOptions(num_train_steps=0))


def run_fine_tuning(task, options, strategy):
  """Runs a task as the options say.

  Args:
    task: a tasks.FineTuningTask.
    options: FineTuningOptions.
    strategy: the tf.distribute.Strategy to train and predict on.

  Returns:
    {eval split: its results} for the splits evaluated.

  Raises:
    ValueError: a bad option, input file or checkpoint, named.
  """
  _check_options(options)
  model = run_setup.resolve_run_model(
      options.init_checkpoint, options.bert_config_file, options.vocab_file,
      options.do_lower_case, options.max_seq_length)
  _check_lora_rank(options, model)
  splits = _splits(task, options)
  examples = {split: task.read_examples(split) for split in splits}
  model_files = run_setup.model_files(model, task.labels_fields())
  _check_outputs(task, options, examples, model, model_files)
  run_files.check_model_to_use(options.do_train, model.init_checkpoint,
                               options.output_dir, "evaluate or predict")
  with run_lock.owned_directory(options.output_dir, "--output_dir",
                               owned=distribution.is_chief(strategy)):
    return _train_evaluate_predict(task, options, strategy, model, examples,
                                   model_files)


def _train_evaluate_predict(task, options, strategy, model, examples,
                            model_files):
  """run_fine_tuning's work, once every input and output is checked and the
  output directory is this run's."""
  num_train_steps = _num_train_steps(examples.get(task.train_split), options)
  config = model.config
  tokenizer = tokenization.FullTokenizer(model.vocabulary,
                                         model.do_lower_case)
  data = {}
  for split, split_examples in examples.items():
    logger.info("***** %s: %d examples *****", split, len(split_examples))
    data[split] = SplitData(split_examples, task.convert_examples(
        split, split_examples, tokenizer, options.max_seq_length))
  num_warmup_steps = int(num_train_steps * options.warmup_proportion)
  trainer = create_trainer(
      strategy, lambda: task.build_model(config), task.objective,
      options.output_dir,
      dataclasses.replace(options.training, num_train_steps=num_train_steps),
      options.learning_rate, num_warmup_steps, options.optimizer,
      options.seed, model.source,
      options.train_batch_size if options.do_train else None,
      options.lora_rank)
  storage.makedirs(options.output_dir)
  if trainer.is_chief:
    # Once the checkpoint to go on from has loaded: the model is this one.
    run_files.write_model_files(options.output_dir, model_files)
    if options.do_train:
      run_files.write_run_flags(options.output_dir, _run_flags(task, options))
    _write_feature_records(task, options.output_dir, data)
  if options.do_train:
    logger.info("  Num steps = %d, warmup %d", num_train_steps,
                num_warmup_steps)
    # A resumed run goes on with the batches after the checkpoint's (the
    # same ones an unbroken run reads, given --seed), not the first ones.
    trainer.train(batching.training_dataset(
        data[task.train_split].features, options.train_batch_size,
        options.seed, options.bucket_by_length).skip(trainer.global_step))

  predictor = Predictor(strategy, trainer.model, options.training.use_xla)

  def decode_and_write(split, batch_size, scored):
    """Predicts a split; writes its prediction files and, when scored,
    its results, all together."""
    outputs = predictor.predict(
        data[split].features, batch_size,
        by_length=options.bucket_by_length or
        not task.predicts_at_full_length)
    predictions = task.decode(split, data[split], outputs, tokenizer)
    if scored:
      results[split] = {"global_step": trainer.global_step, **task.evaluate(
          split, data[split], predictions, batch_size)}
    if trainer.is_chief:
      _write_split_outputs(task, split, data[split], predictions,
                           results.get(split), options.output_dir, written)

  results = {}
  written = set()  # names this run wrote, which no later split replaces
  for split in task.eval_splits if options.do_eval else ():
    decode_and_write(split, options.eval_batch_size, scored=True)
  for split in task.predict_splits if options.do_predict else ():
    decode_and_write(split, options.predict_batch_size,
                     task.can_score(split, data[split].examples))
  if options.export_dir and trainer.is_chief:
    tokenizer = InGraphTokenizer(model.vocabulary, model.do_lower_case) \
        if options.export_text else None
    module, signatures = task.serving(trainer.model.merge_lora(), tokenizer,
                                      options.max_seq_length)
    export.write_saved_model(module, options.export_dir, signatures)
  return results


def _write_split_outputs(task, split, data, predictions, results, output_dir,
                         written):
  """A split's prediction files and, when it is scored (results not None),
  its results file, replacing the earlier ones together; an earlier file
  of the split's output set that this run does not write goes with them,
  unless this run wrote it (its names in `written`, updated)."""
  names = list(task.prediction_files(split))
  if results is not None:
    names.append(task.eval_results_file(split))
  paths = [os.path.join(output_dir, name) for name in names]
  replaced = [os.path.join(output_dir, name) for name in task.output_set(split)
              if name not in names and name not in written]
  written.update(names)
  files_set = atomic_outputs.AtomicFiles(paths, replaced=replaced)
  with files_set as files:
    prediction_files = files if results is None else files[:-1]
    if prediction_files:
      task.write_predictions(split, data, predictions, prediction_files)
    if results is not None:
      files[-1].write(eval_results_text(results))
  logger.info("Wrote %s for %d examples", ", ".join(
      os.path.basename(path) for path in paths), len(data.examples))
  for path in files_set.removed:
    logger.warning(
        "Removed %s, an earlier run's: %s", path,
        "not scored, since the examples do not all carry answers"
        if path.endswith(task.eval_results_file(split)) else
        "this run's predictions have no such file")


def _check_options(options):
  """Raises ValueError for options out of range."""
  if not (options.do_train or options.do_eval or options.do_predict):
    raise ValueError(
        "At least one of `do_train`, `do_eval` or `do_predict' must be True.")
  option_checks.check_at_least_one(options, (
      "train_batch_size", "eval_batch_size", "predict_batch_size",
      "max_seq_length"))
  if options.num_train_epochs <= 0 or not 0 <= options.warmup_proportion <= 1:
    raise ValueError("--num_train_epochs must be positive and "
                     "--warmup_proportion in [0, 1]")
  if options.lora_rank is not None and options.lora_rank < 1:
    raise ValueError(f"--lora_rank={options.lora_rank}: must be at least 1")


def _check_lora_rank(options, model):
  """Raises ValueError for a --lora_rank over the model's hidden size (its
  adapters would be no lower rank), or for adapters that would train on a
  random encoder, frozen at random: no --init_checkpoint and no checkpoint
  in --output_dir to go on from."""
  rank = options.lora_rank
  if rank is None:
    return
  if rank > model.config.hidden_size:
    raise ValueError(f"--lora_rank={rank}: must be at most the hidden_size, "
                     f"{model.config.hidden_size} ({model.config_file})")
  if options.do_train and not model.init_checkpoint and \
      not checkpoint_names(options.output_dir):
    raise ValueError(f"--lora_rank={rank}: adapters train on a pretrained "
                     "encoder, which stays frozen; give --init_checkpoint")


def _splits(task, options):
  """The splits the run reads, in order: train, eval, predict."""
  return ([task.train_split] if options.do_train else []) + \
      list(task.eval_splits if options.do_eval else []) + \
      list(task.predict_splits if options.do_predict else [])


def _check_outputs(task, options, examples, model, model_files):
  """Every file the run will write, checked against its inputs first."""
  if options.export_dir and not task.exports:
    raise ValueError(f"--export_dir: {type(task).__name__} has no export")
  names = []
  for split in [*(task.eval_splits if options.do_eval else ()),
                *(task.predict_splits if options.do_predict else ())]:
    # each written, or an earlier run's removed
    names += [name for name in task.output_set(split) if name not in names]
  names += [task.feature_records(split)[0] for split in examples
            if task.feature_records(split)]
  inputs = [pair for split in examples for pair in task.input_files(split)]
  run_files.check_run_outputs(
      options.output_dir, names, [*inputs, *model.input_files()],
      model.source,
      [("--export_dir", options.export_dir)] if options.export_dir else [],
      model_files, _run_flags(task, options) if options.do_train else None)


def _run_flags(task, options):
  """What makes a training run's checkpoints beside its config: the task,
  its own such flags and --lora_rank (run_files.check_run_outputs)."""
  return {"task": task.name, **task.model_flags(),
          "lora_rank": options.lora_rank}


def _write_feature_records(task, output_dir, data):
  """The files task.feature_records names, one per split that has one."""
  for split, split_data in data.items():
    records = task.feature_records(split)
    if records:
      name, feature_names = records
      count = write_feature_records(os.path.join(output_dir, name),
                                    split_data.features, feature_names)
      logger.info("Wrote %d %s features to %s", count, split, name)


def _num_train_steps(train_examples, options):
  """The original's num_train_steps: examples / batch size * epochs."""
  if not options.do_train:
    return 0
  steps = int(len(train_examples) / options.train_batch_size
              * options.num_train_epochs)
  if steps < 1:
    raise ValueError(f"{len(train_examples)} training examples make no "
                     f"full batch of --train_batch_size="
                     f"{options.train_batch_size}")
  return steps
