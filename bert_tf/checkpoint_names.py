"""The original checkpoint names of a BertEncoder's variables.

A table from each original name ("bert/encoder/layer_0/attention/self/query/
kernel") to the attribute path of its Keras variable, since Keras 3 forbids
"/" in layer names. Every weight keeps the original shape. Also the labels
of run_ner's head rows, which a conversion to or from Hugging Face maps.
"""

# run_ner's head (cls/ner/) has a row per CoNLL-2003 tag, in this order: O,
# then B- and I- of each entity type (IOB2). Converting it to or from a
# Hugging Face token classifier maps its rows by these labels.
NER_ENTITY_TYPES = ("PER", "LOC", "ORG", "MISC")
NER_LABELS = ("O",) + tuple(f"{prefix}-{entity}" for entity in NER_ENTITY_TYPES
                            for prefix in ("B", "I"))

# Original name -> attribute path from a BertEncoder.
_EMBEDDING_NAMES = {
    "bert/embeddings/word_embeddings": "embeddings.word_embeddings",
    "bert/embeddings/token_type_embeddings": "embeddings.token_type_embeddings",
    "bert/embeddings/position_embeddings": "embeddings.position_embeddings",
    "bert/embeddings/LayerNorm/gamma": "embeddings.layer_norm.gamma",
    "bert/embeddings/LayerNorm/beta": "embeddings.layer_norm.beta",
}

# Names inside "bert/encoder/layer_{i}/" -> path inside transformer_layers[i].
_BLOCK_NAMES = {
    "attention/self/query/kernel": "attention.query.kernel",
    "attention/self/query/bias": "attention.query.bias",
    "attention/self/key/kernel": "attention.key.kernel",
    "attention/self/key/bias": "attention.key.bias",
    "attention/self/value/kernel": "attention.value.kernel",
    "attention/self/value/bias": "attention.value.bias",
    "attention/output/dense/kernel": "attention_output_dense.kernel",
    "attention/output/dense/bias": "attention_output_dense.bias",
    "attention/output/LayerNorm/gamma": "attention_layer_norm.gamma",
    "attention/output/LayerNorm/beta": "attention_layer_norm.beta",
    "intermediate/dense/kernel": "intermediate_dense.kernel",
    "intermediate/dense/bias": "intermediate_dense.bias",
    "output/dense/kernel": "output_dense.kernel",
    "output/dense/bias": "output_dense.bias",
    "output/LayerNorm/gamma": "output_layer_norm.gamma",
    "output/LayerNorm/beta": "output_layer_norm.beta",
}

_POOLER_NAMES = {
    "bert/pooler/dense/kernel": "pooler.kernel",
    "bert/pooler/dense/bias": "pooler.bias",
}


def encoder_names(config):
  """{original name: attribute path from a BertEncoder} for `config`."""
  names = dict(_EMBEDDING_NAMES)
  for index in range(config.num_hidden_layers):
    for original, path in _BLOCK_NAMES.items():
      names[f"bert/encoder/layer_{index}/{original}"] = (
          f"transformer_layers.{index}.{path}")
  names.update(_POOLER_NAMES)
  return names
