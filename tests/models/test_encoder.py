import keras
import numpy as np
import pytest
import tensorflow as tf

import bert_tf
from tests.support.helpers import random_inputs, tiny_config
from tests.support.keras_harness import rewrite_keras_file, run_model_test


@pytest.fixture(scope="module")
def encoder():
  keras.utils.set_random_seed(0)  # the same weights in every run
  return bert_tf.BertEncoder(tiny_config(initializer_range=0.2))


def test_output_shapes(encoder):
  outputs = encoder(random_inputs(encoder.config, batch_size=2, seq_length=7))
  assert outputs["sequence_output"].shape == (2, 7, 32)
  assert outputs["embedding_output"].shape == (2, 7, 32)
  assert outputs["pooled_output"].shape == (2, 32)
  assert len(outputs["all_encoder_layers"]) == 2
  np.testing.assert_array_equal(outputs["all_encoder_layers"][-1],
                                outputs["sequence_output"])


def test_weights_exist_before_the_first_call():
  encoder = bert_tf.BertEncoder(tiny_config())
  # 5 embedding weights, 16 per block, 2 pooler
  assert len(encoder.weights) == 5 + 16 * 2 + 2


def test_padding_does_not_change_unpadded_positions(encoder):
  rng = np.random.default_rng(0)
  ids = rng.integers(1, 99, (2, 9)).astype(np.int32)
  segments = np.array([[0] * 5 + [1] * 4] * 2, np.int32)
  short = encoder({"input_ids": ids, "input_mask": np.ones_like(ids),
                   "segment_ids": segments})
  padded_ids = np.concatenate([ids, rng.integers(1, 99, (2, 5))], 1)
  padded = encoder({
      "input_ids": padded_ids.astype(np.int32),
      "input_mask": np.concatenate([np.ones_like(ids), np.zeros((2, 5))],
                                   1).astype(np.int32),
      "segment_ids": np.concatenate([segments, np.ones((2, 5))],
                                    1).astype(np.int32)})
  np.testing.assert_allclose(padded["sequence_output"][:, :9],
                             short["sequence_output"], atol=1e-5)
  np.testing.assert_allclose(padded["pooled_output"], short["pooled_output"],
                             atol=1e-5)


def test_xla_forward_equals_eager(encoder):
  inputs = random_inputs(encoder.config)
  inputs.pop("masked_lm_positions")
  eager = encoder(inputs)
  compiled = tf.function(lambda x: encoder(x), jit_compile=True)(inputs)
  for name in ("sequence_output", "pooled_output", "embedding_output"):
    np.testing.assert_allclose(compiled[name], eager[name], atol=1e-5)


def test_graph_mode_with_unknown_length_rejects_too_long_input(encoder):
  spec = tf.TensorSpec([None, None], tf.int32)
  forward = tf.function(lambda ids: encoder({"input_ids": ids}),
                        input_signature=[spec])
  assert forward(np.ones((1, 64), np.int32))["sequence_output"].shape[1] == 64
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="exceeds max_position_embeddings"):
    forward(np.ones((1, 65), np.int32))


def test_the_length_check_runs_before_the_position_embeddings(encoder):
  # Were the check only a side effect of the function, TensorFlow could run
  # the position add first and fail with a bare shape error (it did, once,
  # under load on TF 2.21): the embeddings must depend on the check.
  forward = tf.function(
      lambda ids: encoder({"input_ids": ids})["embedding_output"])
  graph = forward.get_concrete_function(
      tf.TensorSpec([None, None], tf.int32)).graph
  # The function's own output is an Identity that waits for every side
  # effect; what it returns is its input.
  (embeddings,) = graph.outputs[0].op.inputs
  ancestors, pending = set(), [embeddings.op]
  while pending:
    op = pending.pop()
    if op not in ancestors:
      ancestors.add(op)
      pending += [tensor.op for tensor in op.inputs] + op.control_inputs
  assert "Assert" in {op.type for op in ancestors}


def test_too_long_input_is_a_clear_error(encoder):
  with pytest.raises(ValueError, match="Sequence length 65 exceeds "
                     "max_position_embeddings \\(64\\)"):
    encoder({"input_ids": np.ones((1, 65), np.int32)})


def test_missing_input_ids(encoder):
  with pytest.raises(ValueError, match="missing 'input_ids'"):
    encoder({"ids": np.ones((1, 4), np.int32)})


def test_defaults_mask_to_ones_and_segments_to_zeros(encoder):
  ids = np.array([[5, 6, 7]], np.int32)
  explicit = encoder({"input_ids": ids, "input_mask": np.ones_like(ids),
                      "segment_ids": np.zeros_like(ids)})
  np.testing.assert_array_equal(encoder({"input_ids": ids})["pooled_output"],
                                explicit["pooled_output"])


def test_dropout_applies_only_in_training():
  encoder = bert_tf.BertEncoder(tiny_config(hidden_dropout_prob=0.3))
  inputs = {"input_ids": np.ones((2, 6), np.int32)}
  first = encoder(inputs, training=True)["sequence_output"]
  second = encoder(inputs, training=True)["sequence_output"]
  assert np.abs(np.asarray(first) - np.asarray(second)).max() > 1e-3
  np.testing.assert_array_equal(encoder(inputs)["sequence_output"],
                                encoder(inputs)["sequence_output"])


def test_serialisation_round_trip(encoder):
  # Weights ten times BERT's make attention's logits a hundred times larger,
  # so int8's rounding moves the softmax more: over 120 random models the
  # largest quantized error was 0.065 of the largest output (0.05 failed
  # about one CI run in twenty), where BERT-scale models stay under 0.04.
  loaded = run_model_test(encoder, random_inputs(encoder.config),
                          quantize_relative=0.1)
  assert loaded.config == encoder.config


def test_every_layer_norm_takes_the_configs_epsilon():
  model = bert_tf.BertPretrainer(tiny_config(layer_norm_eps=1e-5))
  epsilons = [layer.epsilon for layer in model._flatten_layers()
              if isinstance(layer, keras.layers.LayerNormalization)]
  # the embeddings', two per block, the masked-LM transform's
  assert epsilons == [1e-5] * (1 + 2 * 2 + 1)
  restored = bert_tf.BertPretrainer.from_config(model.get_config())
  assert restored.encoder.config.layer_norm_eps == 1e-5


@pytest.mark.parametrize("make", [
    bert_tf.BertEncoder, lambda config: bert_tf.BertClassifier(config, 2)])
def test_a_keras_file_whose_config_has_fewer_layers_is_refused(tmp_path,
                                                               make):
  """Keras loads the weights of the layers a config builds and ignores any
  others in the file: a config of 1 layer over the weights of 2 would load
  half the encoder."""
  path = str(tmp_path / "model.keras")
  make(tiny_config()).save(path)

  def one_layer(config):
    config["config"]["config"]["num_hidden_layers"] = 1

  rewrite_keras_file(path, one_layer)
  with pytest.raises(ValueError, match="num_hidden_layers=1, but "
                                       "model.weights.h5 holds 2 "
                                       "transformer blocks"):
    keras.saving.load_model(path)
