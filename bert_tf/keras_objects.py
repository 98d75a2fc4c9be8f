"""Registers every bert_tf class that Keras saves: layers, models, the
optimizers, the learning-rate schedule and the embedding losses.

Each is decorated with keras.saving.register_keras_serializable(package=
"bert_tf") in its module; importing the modules runs the decorators, so that
keras.saving.load_model finds "bert_tf>BertClassifier" and the rest.
`import bert_tf` imports this module once Keras and TensorFlow are loaded
(see bert_tf/__init__.py).
"""

# pylint: disable=unused-import
import bert_tf.layers
import bert_tf.layers.dropout
import bert_tf.layers.layer_combination
import bert_tf.models
import bert_tf.objectives.cross_entropy
import bert_tf.objectives.embedding
import bert_tf.objectives.pretraining
import bert_tf.objectives.sparse_embedding
import bert_tf.objectives.spans
import bert_tf.optimization.optimizers
import bert_tf.text.ner.preprocessor
import bert_tf.text.preprocessor
import bert_tf.text.squad.preprocessor
import bert_tf.text.swag.preprocessor
