"""google-research/bert's extract_features.py, run unchanged under
tensorflow.compat.v1 from a checkout you give (nothing of it is kept here).

TF 2 has no tf.contrib and no Estimator: a small shim gives the original
the contrib layer_norm (the same computation, epsilon 1e-12),
tf.layers.dense, ModeKeys and a TPUEstimator that runs its model_fn in a
session on its input_fn. originals_line is what its main() writes for a
line, value by value. Used by the fixture generator
(tests/fixtures/extract_features/make_reference.py), the JSONL's tests
(tests/extraction/test_jsonl.py) and benchmarks/extract_features.py.
"""

import json
import sys
import types

from tests.support.original_shim import shimmed_tensorflow


def run_original(original_dir, flag_args):
  """Runs the original's extract_features main with `flag_args`
  (["--input_file=...", ...]) in this process, which it leaves with the
  shimmed tensorflow module installed."""
  sys.modules["tensorflow"] = _shimmed_tensorflow()
  sys.path.insert(0, original_dir)
  import extract_features  # pylint: disable=import-outside-toplevel
  extract_features.FLAGS([sys.argv[0], *flag_args])
  extract_features.main(None)


def originals_line(linex_index, tokens, layer_indexes, layer_values):
  """A line as the original's main() writes it: json.dumps of ordered
  dicts, every value a Python float rounded by round(float(x), 6), one at
  a time. layer_values: float32 [layers, tokens, hidden]."""
  return json.dumps({"linex_index": linex_index, "features": [
      {"token": token, "layers": [
          {"index": index, "values": [
              round(float(x), 6) for x in layer_values[layer][position]]}
          for layer, index in enumerate(layer_indexes)]}
      for position, token in enumerate(tokens)]}) + "\n"


class _Spec:
  def __init__(self, mode, predictions, scaffold_fn=None):
    del mode, scaffold_fn
    self.predictions = predictions


class _Estimator:
  """The original's TPUEstimator.predict, without TPUs or Estimator."""

  def __init__(self, use_tpu, model_fn, config, predict_batch_size):
    del use_tpu, config
    self.model_fn = model_fn
    self.batch_size = predict_batch_size

  def predict(self, input_fn, yield_single_examples=True):
    del yield_single_examples
    import tensorflow as tf  # the shimmed compat.v1
    with tf.Graph().as_default():
      dataset = input_fn({"batch_size": self.batch_size})
      features = tf.data.make_one_shot_iterator(dataset).get_next()
      spec = self.model_fn(features, None, "infer",
                           {"batch_size": self.batch_size})
      with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        while True:
          try:
            batch = session.run(spec.predictions)
          except tf.errors.OutOfRangeError:
            return
          for row in range(len(batch["unique_id"])):
            yield {name: value[row] for name, value in batch.items()}


def _shimmed_tensorflow():
  """original_shim's, with the Estimator and TPU names extract_features
  uses."""
  v1 = shimmed_tensorflow()
  v1.estimator = types.SimpleNamespace(
      ModeKeys=types.SimpleNamespace(PREDICT="infer"))
  v1.contrib.tpu = types.SimpleNamespace(
      InputPipelineConfig=types.SimpleNamespace(PER_HOST_V2=2),
      RunConfig=lambda **kwargs: None, TPUConfig=lambda **kwargs: None,
      TPUEstimator=_Estimator, TPUEstimatorSpec=_Spec)
  return v1
