"""Fine-tuning tasks: what each task is (task.py) and the runner that
drives any of them (runner.py)."""

from bert_tf.tasks.runner import FineTuningOptions, run_fine_tuning
from bert_tf.tasks.task import FineTuningTask
